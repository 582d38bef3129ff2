import { describe, expect, it } from 'vitest';
import { MemoryVersionedStore } from '../../../src/state/memory/versioned-store.js';

describe('MemoryVersionedStore', () => {
  it('loads its initial entries, each with its own version', () => {
    const s = new MemoryVersionedStore([
      ['a', 1],
      ['b', 2],
    ]);
    expect(s.get('a')).toEqual({ value: 1, version: 1 });
    expect(s.get('b')).toEqual({ value: 2, version: 2 });
    expect(s.version).toBe(2);
    expect(s.ids()).toEqual(['a', 'b']);
    expect(s.get('c')).toBeUndefined();
  });

  it('gives every write a new, larger version, never reused', async () => {
    const s = new MemoryVersionedStore<string>([['a', 'x']]);
    const seen = [s.get('a')!.version];
    expect(await s.put('a', 'y')).toBe(s.version);
    seen.push(s.get('a')!.version);
    expect(await s.delete('a')).toBe(true);
    expect(s.get('a')).toBeUndefined();
    seen.push(s.version);
    await s.put('a', 'x'); // the same value as at first: still a new version
    seen.push(s.get('a')!.version);
    expect(seen).toEqual([...seen].sort((p, q) => p - q));
    expect(new Set(seen).size).toBe(seen.length);
    expect(s.get('a')!.value).toBe('x');
  });

  it('does not move its version for a delete that deleted nothing', async () => {
    const s = new MemoryVersionedStore<string>([['a', 'x']]);
    const v = s.version;
    expect(await s.delete('nope')).toBe(false);
    expect(s.version).toBe(v);
  });
});
