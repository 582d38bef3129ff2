import { describe, expect, it } from 'vitest';
import { dot, l2normalize } from '../../src/util/vector.js';

describe('l2normalize', () => {
  it('returns a unit-length copy by default, leaving the input alone', () => {
    const v = [3, 4];
    const u = l2normalize(v)!;
    expect(u).toBeInstanceOf(Float32Array);
    expect(Array.from(u)).toEqual([Math.fround(0.6), Math.fround(0.8)]);
    expect(v).toEqual([3, 4]);
  });

  it('normalises in place when given the vector as its output', () => {
    const v = Float32Array.from([0, 0, 2]);
    expect(l2normalize(v, v)).toBe(v);
    expect(Array.from(v)).toEqual([0, 0, 1]);
  });

  it.each([
    ['zero', [0, 0, 0]],
    ['empty', []],
    ['NaN', [1, NaN]],
    ['Infinity', [1, Infinity]],
  ])('a %s vector has no direction: undefined, and the output is untouched', (_, v) => {
    const out = Float32Array.from(v.map(() => 9));
    expect(l2normalize(v, out)).toBeUndefined();
    expect(Array.from(out)).toEqual(v.map(() => 9));
  });

  it('keeps the direction of a long vector whose squares sum past float32 range', () => {
    const u = l2normalize(Float32Array.from([3e30, 4e30]))!;
    expect(u[0]).toBeCloseTo(0.6, 6);
    expect(u[1]).toBeCloseTo(0.8, 6);
  });
});

describe('dot', () => {
  it('sums the products, whatever the length modulo 4', () => {
    for (let n = 0; n < 10; n++) {
      const a = Array.from({ length: n }, (_, i) => i + 1);
      const b = Array.from({ length: n }, (_, i) => (i % 2 ? -1 : 2));
      let want = 0;
      for (let i = 0; i < n; i++) want += a[i]! * b[i]!;
      expect(dot(a, b)).toBe(want);
    }
  });
});
