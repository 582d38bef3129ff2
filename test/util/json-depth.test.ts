import { describe, expect, it } from 'vitest';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../../src/util/json-depth.js';

const nest = (n: number, open = '[', close = ']') => `${open.repeat(n)}${close.repeat(n)}`;

describe('jsonTooDeep', () => {
  it('is true just past the cap, false at it, for arrays and objects', () => {
    expect(jsonTooDeep(nest(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonTooDeep(nest(MAX_JSON_DEPTH + 1))).toBe(true);
    const obj = (n: number): string => (n === 0 ? '1' : `{"k":${obj(n - 1)}}`);
    expect(jsonTooDeep(obj(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonTooDeep(obj(MAX_JSON_DEPTH + 1))).toBe(true);
  });

  it('brackets inside strings (escaped quotes included) do not count', () => {
    const s = JSON.stringify({ text: `\\"${'['.repeat(5000)}`, list: [1, 2] });
    expect(jsonTooDeep(s)).toBe(false);
  });

  it('wide but shallow JSON is not deep', () => {
    expect(jsonTooDeep(JSON.stringify(Array.from({ length: 10_000 }, () => [[1]])))).toBe(false);
  });
});
