/**
 * A minimal pass-through proxy: the reference contender of the benchmark (the floor of any Node proxy
 * on this machine, see benchmarks/README.md, "Method").
 *
 *   node:http server → one undici Pool (keep-alive) to the upstream origin
 *
 * For each request it reads the whole request body, forwards it with the same method and path and
 * only the headers the gateway sends upstream (content-type, authorization), reads the whole answer
 * and returns its status, content-type and body. Everything else is ignored (x-gateway-* headers
 * included): no routing, no logging, no metrics, no streaming.
 *
 * Env: PROXY_UPSTREAM (origin, e.g. http://127.0.0.1:PORT; required), PROXY_PORT (default 0 = any
 * free port), PROXY_HOST (default 127.0.0.1).
 * Prints one line `listening <port>` on stdout once it accepts connections.
 * Run it pinned like the gateway: taskset -c 0 node --import tsx benchmarks/minimal-proxy.ts
 */
import http from 'node:http';
import { Pool } from 'undici';
import { serveUntilSignalled } from './serve.js';

const UPSTREAM = process.env.PROXY_UPSTREAM;
if (!UPSTREAM) {
  process.stderr.write('minimal-proxy: PROXY_UPSTREAM (e.g. http://127.0.0.1:8080) is required\n');
  process.exit(2);
}
const PORT = Number(process.env.PROXY_PORT ?? 0);
const HOST = process.env.PROXY_HOST ?? '127.0.0.1';

// The same pool settings as the gateway's upstream Agent (src/compose/providers.ts).
const pool = new Pool(new URL(UPSTREAM).origin, {
  connections: 512,
  pipelining: 1,
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
});

const BAD_GATEWAY = '{"error":{"message":"minimal-proxy: upstream unreachable","type":"server_error"}}';

const server = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    const headers: Record<string, string> = {};
    const ct = req.headers['content-type'];
    if (ct) headers['content-type'] = ct;
    const auth = req.headers.authorization;
    if (auth) headers.authorization = auth;
    pool
      .request({ path: req.url ?? '/', method: (req.method ?? 'POST') as 'POST', headers, body })
      .then(async ({ statusCode, headers: upHeaders, body: upBody }) => {
        const buf = Buffer.from(await upBody.arrayBuffer());
        const out: Record<string, string> = { 'content-length': String(buf.length) };
        const uct = upHeaders['content-type'];
        if (uct) out['content-type'] = Array.isArray(uct) ? uct[0]! : uct;
        res.writeHead(statusCode, out);
        res.end(buf);
      })
      .catch(() => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        res.writeHead(502, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(BAD_GATEWAY)) });
        res.end(BAD_GATEWAY);
      });
  });
});
// The gateway's server settings (src/compose/server.ts): keepAliveTimeout 65 s, requestTimeout 0.
server.keepAliveTimeout = 65_000;
server.requestTimeout = 0;

serveUntilSignalled(server, PORT, HOST, () => pool.close());
