import { describe, expect, it } from 'vitest';
import { resolveCheck, runCheck } from '../../src/checks/registry.js';
import { chatRequest, chatResponse, deps, expectInvalid, run, verdict } from './_helpers.js';

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

  it('none found and all found are one shared, frozen outcome per config (its not-inverse too); a mix is made per run', async () => {
    const never = new AbortController().signal;
    for (const not of [false, true]) {
      const check = resolveCheck('contains', { words: ['cat', 'fox'], operator: 'none', not }, 'p');
      const none1 = await runCheck(check, chatResponse('a dog'), deps(), never);
      const none2 = await runCheck(check, chatResponse('a bird'), deps(), never);
      expect(none2).toBe(none1);
      expect(Object.isFrozen(none1) && Object.isFrozen(none1.data)).toBe(true);
      expect([none1.verdict, none1.data]).toEqual([!not, { operator: 'none', found: [], missing: ['cat', 'fox'] }]);
      const all = await runCheck(check, chatResponse('cat and fox'), deps(), never);
      expect(all).toBe(await runCheck(check, chatResponse('fox, cat'), deps(), never));
      expect([all.verdict, all.data]).toEqual([not, { operator: 'none', found: ['cat', 'fox'], missing: [] }]);
      const mixed = await runCheck(check, chatResponse('a fox'), deps(), never);
      expect(mixed).not.toBe(await runCheck(check, chatResponse('a fox'), deps(), never));
      expect(mixed).toEqual({ verdict: not, data: { operator: 'none', found: ['fox'], missing: ['cat'] } });
    }
  });

  it('found and missing list the words in their configured order, whatever the split', async () => {
    const words = ['ant', 'bee', 'cat', 'dog'];
    for (let mask = 0; mask < 16; mask++) {
      const present = words.filter((_, i) => mask & (1 << i));
      const out = await run('contains', { words, operator: 'all' }, chatResponse(`here: ${present.join(' ')}`));
      expect(out.data, `mask ${mask}`).toEqual({ operator: 'all', found: present, missing: words.filter((w) => !present.includes(w)) });
      expect(out.verdict).toBe(present.length === words.length);
    }
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
