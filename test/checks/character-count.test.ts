import { describe, expect, it } from 'vitest';
import { countCharacters } from '../../src/checks/counting.js';
import { chatResponse, expectInvalid, run, verdict } from './_helpers.js';

describe('characterCount', () => {
  it('counts code points (an emoji is one character)', () => {
    expect(countCharacters('abc')).toBe(3);
    expect(countCharacters('a😀b')).toBe(3);
    expect(countCharacters('')).toBe(0);
  });

  it('passes within the range, fails outside', async () => {
    const p = { minCharacters: 2, maxCharacters: 4 };
    expect(await verdict('characterCount', p, chatResponse('a'))).toBe(false);
    expect(await verdict('characterCount', p, chatResponse('abcd'))).toBe(true);
    expect(await verdict('characterCount', p, chatResponse('abcde'))).toBe(false);
    const out = await run('characterCount', { maxCharacters: 3 }, chatResponse('😀😀'));
    expect({ verdict: out.verdict, data: out.data }).toEqual({
      verdict: true,
      data: { count: 2, minCharacters: 0, maxCharacters: 3 },
    });
  });

  it('not inverts; bad parameters are refused', async () => {
    expect(await verdict('characterCount', { maxCharacters: 1, not: true }, chatResponse('ab'))).toBe(true);
    expectInvalid('characterCount', { maxCharacters: -5 }, 'maxCharacters');
    expectInvalid('characterCount', { minCharacters: 9, maxCharacters: 1 }, 'maxCharacters');
  });
});
