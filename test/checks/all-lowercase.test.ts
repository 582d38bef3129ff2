import { describe, expect, it } from 'vitest';
import { chatResponse, expectInvalid, run, verdict } from './_helpers.js';

describe('alllowercase', () => {
  it('passes when no cased letter is upper case', async () => {
    expect(await verdict('alllowercase', {}, chatResponse('hello, world 42! été'))).toBe(true);
    expect(await run('alllowercase', {}, chatResponse('Hello World'))).toEqual({ verdict: false, data: { uppercaseLetters: 2 } });
    expect(await verdict('alllowercase', { not: true }, chatResponse('ABC'))).toBe(true);
  });
  it('takes no parameters but not', () => {
    expectInvalid('alllowercase', { x: 1 }, '');
  });
});
