import { describe, expect, it } from 'vitest';
import { chatResponse, expectInvalid, run, verdict } from './_helpers.js';

describe('alluppercase', () => {
  it('passes when no cased letter is lower case (digits and punctuation do not count)', async () => {
    expect(await verdict('alluppercase', {}, chatResponse('HELLO, WORLD 42! ÉTÉ'))).toBe(true);
    expect(await run('alluppercase', {}, chatResponse('HELLo wORLD'))).toEqual({ verdict: false, data: { lowercaseLetters: 2 } });
    expect(await verdict('alluppercase', { not: true }, chatResponse('abc'))).toBe(true);
  });
  it('takes no parameters but not', () => {
    expectInvalid('alluppercase', { strict: true }, '');
  });
});
