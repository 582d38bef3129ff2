import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MasterKey, MasterKeyring } from '../../src/security/master-key.js';

describe('MasterKey', () => {
  const bytes = randomBytes(32);

  it('parses 32 bytes as hex or base64 (standard or URL-safe); the same bytes give the same id', () => {
    const ids = [bytes.toString('hex'), bytes.toString('base64'), bytes.toString('base64url'), ` ${bytes.toString('hex').toUpperCase()}\n`].map((t) => MasterKey.parse(t).id);
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(MasterKey.parse(randomBytes(32).toString('hex')).id).not.toBe(ids[0]);
  });

  it.each([
    ['too short', randomBytes(16).toString('hex')],
    ['too long', randomBytes(33).toString('base64')],
    ['a passphrase', 'correct horse battery staple'],
    ['empty', ''],
  ])('refuses %s, naming the variable and never the value', (_l, text) => {
    let message = '';
    try {
      MasterKey.parse(text);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/SLUICE_MASTER_KEY must be 32 bytes/);
    if (text) expect(message).not.toContain(text);
  });

  it('seals with a fresh IV each time and opens what it sealed, for the same associated data only', () => {
    const k = MasterKey.parse(bytes.toString('hex'));
    const a = k.seal('{"api_key":"sk-secret"}', 'vk-1');
    const b = k.seal('{"api_key":"sk-secret"}', 'vk-1');
    expect(a.iv).not.toBe(b.iv);
    expect(a.ct).not.toBe(b.ct);
    expect(a.kid).toBe(k.id);
    expect(k.open(a, 'vk-1')).toBe('{"api_key":"sk-secret"}');
    expect(() => k.open(a, 'vk-2')).toThrow(/does not open/);
    const ct = Buffer.from(a.ct, 'base64');
    ct[0] = ct[0]! ^ 1;
    expect(() => k.open({ ...a, ct: ct.toString('base64') }, 'vk-1')).toThrow(/does not open/);
    expect(() => MasterKey.generate().key.open(a, 'vk-1')).toThrow(/sealed with master key/);
  });

  it('refuses a shortened tag (Node accepts a 4-byte one, which would make forging a value 2^32 tries)', () => {
    const k = MasterKey.parse(bytes.toString('hex'));
    const a = k.seal('{"api_key":"sk-secret"}', 'vk-1');
    const short = Buffer.from(a.tag, 'base64').subarray(0, 4).toString('base64');
    expect(() => k.open({ ...a, tag: short }, 'vk-1')).toThrow(/does not open/);
  });

  it('never shows the key: JSON and inspect give its id only', () => {
    const k = MasterKey.parse(bytes.toString('base64'));
    for (const text of [JSON.stringify({ k }), inspect(k, { depth: 5, showHidden: true })]) {
      expect(text).not.toContain(bytes.toString('base64'));
      expect(text).not.toContain(bytes.toString('hex'));
    }
    expect(JSON.stringify(k)).toBe(`"MasterKey(${k.id})"`);
  });
});

describe('MasterKeyring (a rotation: SLUICE_MASTER_KEY new, SLUICE_MASTER_KEY_PREVIOUS old)', () => {
  const oldText = randomBytes(32).toString('base64');
  const olderText = randomBytes(32).toString('hex');
  const newText = randomBytes(32).toString('base64');
  const ring = MasterKeyring.parse(newText, ` ${oldText} ,${olderText},`);
  const old = MasterKey.parse(oldText);
  const older = MasterKey.parse(olderText);

  it('seals with the new key only, and opens what either the new or a previous key sealed', () => {
    const s = ring.seal('secret', 'aad');
    expect(s.kid).toBe(MasterKey.parse(newText).id);
    expect(ring.id).toBe(s.kid);
    expect(ring.open(s, 'aad')).toBe('secret');
    expect(() => old.open(s, 'aad')).toThrow(/sealed with master key/);
    expect(ring.open(old.seal('from old', 'aad'), 'aad')).toBe('from old');
    expect(ring.open(older.seal('from older', 'aad'), 'aad')).toBe('from older');
    expect(ring.previousIds).toEqual([old.id, older.id]);
    // the associated data still binds: a previous key's seal moved to another record does not open
    expect(() => ring.open(old.seal('x', 'record-1'), 'record-2')).toThrow(/does not open/);
  });

  it('a seal no key of the ring made names every key id and both variables, never a key', () => {
    const stranger = MasterKey.generate();
    let message = '';
    try {
      ring.open(stranger.key.seal('x', 'aad'), 'aad');
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(stranger.key.id);
    expect(message).toContain(`SLUICE_MASTER_KEY is key ${ring.id}`);
    expect(message).toContain(`SLUICE_MASTER_KEY_PREVIOUS holds ${old.id}, ${older.id}`);
    for (const t of [oldText, olderText, newText, stranger.text]) expect(message).not.toContain(t);
    expect(MasterKeyring.parse(newText, undefined).previousIds).toEqual([]);
  });

  it('a malformed previous key is refused naming SLUICE_MASTER_KEY_PREVIOUS; the ring never prints a key', () => {
    expect(() => MasterKeyring.parse(newText, `${oldText},not-a-key`)).toThrow(/^SLUICE_MASTER_KEY_PREVIOUS must be 32 bytes/);
    const text = `${JSON.stringify(ring)} ${inspect(ring)} ${String(ring)}`;
    for (const t of [oldText, olderText, newText]) expect(text).not.toContain(t);
    expect(JSON.stringify(ring)).toBe(`"MasterKeyring(${ring.id}, ${old.id}, ${older.id})"`);
  });
});
