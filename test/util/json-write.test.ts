import { describe, expect, it } from 'vitest';
import { jsonNumber, jsonString } from '../../src/util/json-write.js';

describe('json-write', () => {
  it('jsonString and jsonNumber write what JSON.stringify writes', () => {
    for (const s of ['plain', 'quote "x"', 'back\\slash', 'ctl\u0001', 'lone \ud800', 'ünïcode', '']) expect(jsonString(s)).toBe(JSON.stringify(s));
    for (const n of [0, -1, 1.5, 1e21, NaN, Infinity, -Infinity]) expect(jsonNumber(n)).toBe(JSON.stringify(n));
  });
});
