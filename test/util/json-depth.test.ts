import { describe, expect, it } from 'vitest';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../../src/util/json-depth.js';

const nest = (n: number) => JSON.parse(`${'['.repeat(n)}${']'.repeat(n)}`) as unknown;
const nestObj = (n: number) => JSON.parse(`${'{"k":'.repeat(n)}1${'}'.repeat(n)}`) as unknown;

describe('jsonTooDeep', () => {
  it('is true just past the cap, false at it, for arrays and objects', () => {
    expect(jsonTooDeep(nest(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonTooDeep(nest(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonTooDeep(nestObj(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonTooDeep(nestObj(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonTooDeep({ a: [1, { b: [] }] }, 4)).toBe(false);
    expect(jsonTooDeep({ a: [1, { b: [] }] }, 3)).toBe(true);
  });

  it('walks 100,000 levels without overflowing the stack (it stops at the cap)', () => {
    expect(jsonTooDeep(nest(100_000))).toBe(true);
  });

  it('bare values and wide, shallow JSON are not deep', () => {
    for (const v of [null, 1, 'x', true]) expect(jsonTooDeep(v)).toBe(false);
    expect(jsonTooDeep(Array.from({ length: 10_000 }, () => [[1]]))).toBe(false);
  });
});
