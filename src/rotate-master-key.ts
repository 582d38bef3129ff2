import { parseArgs } from 'node:util';
import { MASTER_KEY_ENV, MasterKeyring, PREVIOUS_MASTER_KEYS_ENV } from './security/master-key.js';
import { createRedis } from './state/redis/connection.js';
import { resealVirtualKeys } from './state/redis/virtual-key-reseal.js';

const USAGE = `Usage: sluice rotate-master-key [--redis URL]

Re-seals every virtual key's secrets stored in Redis under the master key in ${MASTER_KEY_ENV}, opening
those sealed under a key in ${PREVIOUS_MASTER_KEYS_ENV} (comma-separated). Run it once every gateway
runs with both variables set; gateways keep serving meanwhile. Then unset ${PREVIOUS_MASTER_KEYS_ENV}.

Options:
  --redis URL  redis:// or rediss:// URL (env REDIS_URL)
  -h, --help   this text

Exit status: 0 when every stored key is sealed under ${MASTER_KEY_ENV}; 1 when some could not be opened or
were being written meanwhile (listed; run it again); 2 on a usage error or an unreachable Redis.
`;

/** Where the command writes: lines for the terminal (never a secret: ids and counts only). */
export interface RotateOutput {
  out(line: string): void;
  err(line: string): void;
}

/**
 * `sluice rotate-master-key`: the one-shot half of a master key rotation (README "Master key
 * rotation", docs/master-key-rotation.md). Answers the exit status.
 */
export async function rotateMasterKey(argv: string[], env: NodeJS.ProcessEnv, io: RotateOutput): Promise<number> {
  let values: { redis?: string | undefined; help?: boolean | undefined };
  try {
    values = parseArgs({ args: argv, options: { redis: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false }).values;
  } catch (e) {
    io.err(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const url = values.redis ?? env.REDIS_URL;
  if (!url || !/^rediss?:\/\//.test(url)) {
    io.err(`--redis (or REDIS_URL) must be a redis:// or rediss:// URL: the virtual keys to re-seal are in Redis\n\n${USAGE}`);
    return 2;
  }
  const current = env[MASTER_KEY_ENV];
  if (!current) {
    io.err(`${MASTER_KEY_ENV} is not set: it holds the master key to re-seal under (and ${PREVIOUS_MASTER_KEYS_ENV} the one it replaces)`);
    return 2;
  }
  let ring: MasterKeyring;
  try {
    ring = MasterKeyring.parse(current, env[PREVIOUS_MASTER_KEYS_ENV]);
  } catch (e) {
    io.err((e as Error).message);
    return 2;
  }
  const conn = createRedis(url, { connectionName: 'sluice-rotate-master-key', commandTimeoutMs: 10_000 });
  try {
    try {
      await conn.waitUntilReady(5000);
    } catch (e) {
      io.err((e as Error).message);
      return 2;
    }
    const r = await resealVirtualKeys(conn, ring);
    io.out(`re-sealed ${r.resealed} virtual key(s) under master key ${r.kid}; ${r.current} already under it or holding no secret`);
    for (const [field, why] of r.unreadable) io.err(`not re-sealed: ${field}: ${why}`);
    for (const field of r.busy) io.err(`not re-sealed: ${field}: written by a gateway during every pass; run the command again`);
    if (r.unreadable.size > 0 || r.busy.length > 0) return 1;
    io.out(
      ring.previousIds.length > 0
        ? `every stored virtual key is sealed under ${r.kid}: ${PREVIOUS_MASTER_KEYS_ENV} (${ring.previousIds.join(', ')}) can be unset`
        : `every stored virtual key is sealed under ${r.kid}`,
    );
    return 0;
  } catch (e) {
    io.err(`re-sealing stopped: ${(e as Error).message}; what was re-sealed stays so, run the command again`);
    return 2;
  } finally {
    await conn.close();
  }
}
