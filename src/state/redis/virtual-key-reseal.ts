import { MasterKeyError, type SecretSealer } from '../../security/master-key.js';
import { observed, type RedisConnection } from './connection.js';
import { aad, type StoredVirtualKey } from './virtual-key-seal.js';
import { REDIS_VIRTUAL_KEY_STORE, RESEAL_LUA, virtualKeyKeys, type VirtualKeyCommands } from './virtual-key-scripts.js';

/** What `resealVirtualKeys` did. */
export interface ResealReport {
  /** The key id every re-sealed value now carries. */
  kid: string;
  /** Values this run re-sealed under `kid`. */
  resealed: number;
  /** Stored keys that were already under `kid`, or hold no secret. */
  current: number;
  /** Hash field → why its secrets do not open with the keyring given (never a secret); left as they are. */
  unreadable: Map<string, string>;
  /** Fields rewritten by a gateway on every pass of this run (so not re-sealed by it); run it again. */
  busy: string[];
}

/**
 * Re-seals, under the sealer's current key, every made virtual key whose secrets Redis holds sealed
 * under another (`sluice rotate-master-key`). Only the sealed part of a stored value changes, with the
 * same associated data (its hash field), so the key's content, scope and version stay as they were:
 * running gateways re-read it from the channel, still open it (their keyring has both keys), and keep
 * the plans built from it. Each value is replaced only if it still holds what was read (a script
 * compares them), so a rotation PUT made meanwhile is never undone; such a field is read again on the
 * next pass, at most `passes` passes.
 */
export async function resealVirtualKeys(conn: RedisConnection, sealer: SecretSealer, prefix = 'sluice:', passes = 5): Promise<ResealReport> {
  const keys = virtualKeyKeys(prefix);
  conn.client.defineCommand('sluiceVkReseal', { numberOfKeys: 1, lua: RESEAL_LUA });
  const commands = conn.client as unknown as VirtualKeyCommands;
  const report: ResealReport = { kid: sealer.id, resealed: 0, current: 0, unreadable: new Map(), busy: [] };
  let again: Set<string> | undefined; // after the first pass: the fields written meanwhile, only
  for (let pass = 1; pass <= passes && (again === undefined || again.size > 0); pass++) {
    const stored = await observed(conn, REDIS_VIRTUAL_KEY_STORE, 'reseal_read', () => conn.client.hgetall(keys.keys));
    const busy = new Set<string>();
    for (const [field, json] of Object.entries(stored)) {
      if (again && !again.has(field)) continue;
      let next: string;
      try {
        const s = JSON.parse(json) as StoredVirtualKey;
        if (!s.sealed || s.sealed.kid === sealer.id) {
          report.current++;
          continue;
        }
        next = JSON.stringify({ ...s, sealed: sealer.seal(sealer.open(s.sealed, aad(field)), aad(field)) } satisfies StoredVirtualKey);
      } catch (e) {
        report.unreadable.set(field, e instanceof MasterKeyError ? e.message : `not readable: ${(e as Error).message}`);
        continue;
      }
      const done = await observed(conn, REDIS_VIRTUAL_KEY_STORE, 'reseal', () => commands.sluiceVkReseal(keys.keys, field, json, next, keys.channel));
      if (done === 1) report.resealed++;
      else busy.add(field);
    }
    again = busy;
  }
  report.busy = [...(again ?? [])];
  return report;
}
