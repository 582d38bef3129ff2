/**
 * Why the server could not listen, in words, with the option that changes it: the first thing a
 * second `npm start` or a copy-pasted command meets is a port that is taken. `port` and `host` are
 * how this command sets them (the quickstart has --port only).
 */
export function listenFailure(
  e: NodeJS.ErrnoException,
  host: string,
  port: number,
  how: { port: string; host?: string } = { port: 'pass --port N or set PORT', host: 'pass --host ADDRESS or set HOST' },
): string {
  const where = `cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (e.code) {
    case 'EADDRINUSE':
      return `${where}: port ${port} is in use (EADDRINUSE); ${how.port}`;
    case 'EACCES':
      return `${where}: this user may not bind port ${port} (EACCES); ${how.port} with N of 1024 or more`;
    case 'EADDRNOTAVAIL':
      return `${where}: ${host} is not an address of this machine (EADDRNOTAVAIL)${how.host ? `; ${how.host}` : ''}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${where}: ${host} does not resolve (${e.code})${how.host ? `; ${how.host}` : ''}`;
    default:
      return `${where}: ${e.message}`;
  }
}
