import { describe, expect, it } from 'vitest';
import { jsonMs3, jsonNumber, jsonString } from '../../src/util/json-write.js';
import { seededRandom } from '../../src/util/prng.js';

const ms3 = (ms: number): number => Math.round(ms * 1000) / 1000;

describe('json-write', () => {
  it('jsonString and jsonNumber write what JSON.stringify writes', () => {
    for (const s of ['plain', 'quote "x"', 'back\\slash', 'ctl\u0001', 'lone \ud800', 'ünïcode', '']) expect(jsonString(s)).toBe(JSON.stringify(s));
    for (const n of [0, -1, 1.5, 1e21, NaN, Infinity, -Infinity]) expect(jsonNumber(n)).toBe(JSON.stringify(n));
  });

  it('jsonMs3 writes a millisecond figure rounded to the microsecond as JSON.stringify does', () => {
    const fixed = [0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 1.25, 10.2, 999.999, 5000.1, 123456789.012, 999999999999.999];
    for (const v of fixed) expect(jsonMs3(v)).toBe(JSON.stringify(v));
    const random = seededRandom(7);
    for (let i = 0; i < 20_000; i++) {
      const v = ms3(random() * 10 ** (i % 10));
      expect(jsonMs3(v)).toBe(JSON.stringify(v));
    }
  });

  it('jsonMs3 falls back to the general writer for values it was not made for', () => {
    for (const v of [0.0004, 1.23456, -1, -0.5, 1e12, 1e15, 1e21, NaN, Infinity]) expect(jsonMs3(v)).toBe(JSON.stringify(v));
  });
});
