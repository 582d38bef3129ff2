import { describe, expect, it } from 'vitest';
import { memoByObject } from '../../src/util/memo.js';

describe('memoByObject', () => {
  it('computes once per key object, including falsy and undefined results', () => {
    const seen: object[] = [];
    const f = memoByObject((k: { v: unknown }) => {
      seen.push(k);
      return k.v;
    });
    const a = { v: 1 };
    const b = { v: undefined };
    const c = { v: false };
    expect([f(a), f(a), f(b), f(b), f(c), f(c)]).toEqual([1, 1, undefined, undefined, false, false]);
    expect(seen).toEqual([a, b, c]);
    expect(f({ v: 1 })).toBe(1); // an equal but different object is another key
    expect(seen).toHaveLength(4);
  });

  it('does not remember a computation that threw', () => {
    let calls = 0;
    const f = memoByObject((_k: object) => {
      if (++calls === 1) throw new Error('first time');
      return 'ok';
    });
    const k = {};
    expect(() => f(k)).toThrow('first time');
    expect(f(k)).toBe('ok');
    expect(calls).toBe(2);
  });
});
