import { describe, expect, it } from 'vitest';
import { chatRequest, chatResponse, expectInvalid, run, verdict } from './_helpers.js';

describe('contains', () => {
  const text = chatResponse('the quick brown fox');
  it.each([
    ['any', ['fox', 'cat'], true],
    ['any', ['cat', 'dog'], false],
    ['all', ['quick', 'fox'], true],
    ['all', ['quick', 'cat'], false],
    ['none', ['cat', 'dog'], true],
    ['none', ['cat', 'fox'], false],
  ] as const)('operator %s with %j → %s', async (operator, words, expected) => {
    expect(await verdict('contains', { words, operator }, text)).toBe(expected);
  });

  it('defaults to any, is case-sensitive, and says which words were found', async () => {
    const out = await run('contains', { words: ['Fox', 'brown'] }, text);
    expect(out).toEqual({ verdict: true, data: { operator: 'any', found: ['brown'], missing: ['Fox'] } });
  });

  it('not inverts', async () => {
    expect(await verdict('contains', { words: ['fox'], not: true }, text)).toBe(false);
  });

  it('reads every request message', async () => {
    expect(await verdict('contains', { words: ['banned'], operator: 'none' }, chatRequest('this is banned'))).toBe(false);
  });

  it('refuses bad parameters', () => {
    expectInvalid('contains', { words: [] }, 'words');
    expectInvalid('contains', { words: ['a'], operator: 'some' }, 'operator');
    expectInvalid('contains', { words: 'a' }, 'words');
  });
});
