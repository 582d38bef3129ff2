import { describe, expect, it } from 'vitest';
import { countWords } from '../../src/checks/counting.js';
import { requestInput } from '../../src/checks/text.js';
import { chatRequest, chatResponse, expectInvalid, run, verdict } from './_helpers.js';

describe('wordCount', () => {
  it('counts runs of non-whitespace', () => {
    expect(countWords('')).toBe(0);
    expect(countWords('  one\ttwo\n three  ')).toBe(3);
    expect(countWords('a\u00a0b')).toBe(2);
  });

  it('passes within [minWords, maxWords], both included', async () => {
    const p = { minWords: 2, maxWords: 3 };
    expect(await verdict('wordCount', p, chatResponse('one'))).toBe(false);
    expect(await verdict('wordCount', p, chatResponse('one two'))).toBe(true);
    expect(await verdict('wordCount', p, chatResponse('one two three'))).toBe(true);
    expect(await verdict('wordCount', p, chatResponse('one two three four'))).toBe(false);
  });

  it('counts the last user message of a request, with the count in data', async () => {
    const input = requestInput({
      endpoint: 'chat',
      body: { messages: [{ role: 'system', content: 'a long system prompt here' }, { role: 'user', content: 'hi there' }] },
    });
    const { verdict, data } = await run('wordCount', { maxWords: 2 }, input);
    expect({ verdict, data }).toEqual({ verdict: true, data: { count: 2, minWords: 0, maxWords: 2 } });
  });

  it('not inverts', async () => {
    expect(await verdict('wordCount', { maxWords: 1, not: true }, chatRequest('one two'))).toBe(true);
  });

  it('refuses bad parameters', () => {
    expectInvalid('wordCount', { minWords: -1 }, 'minWords');
    expectInvalid('wordCount', { minWords: 1.5 }, 'minWords');
    expectInvalid('wordCount', { minWords: 5, maxWords: 2 }, 'maxWords', /maxWords must be at least minWords/);
    expectInvalid('wordCount', { min: 1 }, '');
  });
});
