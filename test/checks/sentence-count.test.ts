import { describe, expect, it } from 'vitest';
import { countSentences } from '../../src/checks/counting.js';
import { chatResponse, expectInvalid, verdict } from './_helpers.js';

describe('sentenceCount', () => {
  it.each([
    ['', 0],
    ['...', 0],
    ['Hello world', 1],
    ['Hi. How are you?', 2],
    ['Wow!!! Really?! Yes.', 3],
    ['One. Two', 2],
  ])('%j has %i sentences', (text, n) => {
    expect(countSentences(text)).toBe(n);
  });

  it('passes within the range, fails outside, not inverts', async () => {
    const p = { minSentences: 1, maxSentences: 2 };
    expect(await verdict('sentenceCount', p, chatResponse('One. Two.'))).toBe(true);
    expect(await verdict('sentenceCount', p, chatResponse('One. Two. Three.'))).toBe(false);
    expect(await verdict('sentenceCount', p, chatResponse(''))).toBe(false);
    expect(await verdict('sentenceCount', { ...p, not: true }, chatResponse(''))).toBe(true);
  });

  it('refuses bad parameters', () => {
    expectInvalid('sentenceCount', { maxSentences: 'ten' }, 'maxSentences');
    expectInvalid('sentenceCount', { minSentences: 3, maxSentences: 1 }, 'maxSentences');
  });
});
