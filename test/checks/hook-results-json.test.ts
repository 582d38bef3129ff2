import { describe, expect, it } from 'vitest';
import { appendHookResults, hookResultsJson } from '../../src/checks/hook-results-json.js';
import { hookResultsBody, type HookAccount, type HookResult } from '../../src/checks/hooks.js';
import { resolveCheck } from '../../src/checks/registry.js';
import { settleCheckSync } from '../../src/checks/settle.js';
import { DATA_JSON } from '../../src/checks/types.js';
import { chatRequest, deps } from './_helpers.js';

const hook = (over: Partial<HookResult> = {}): HookResult => ({
  id: 'h',
  verdict: true,
  deny: false,
  async: false,
  checks: [],
  execution_time: 0.5,
  transformed: false,
  ...over,
});

/** The text must be exactly what JSON.stringify writes of the same results. */
const same = (a: HookAccount) => expect(hookResultsJson(a)).toBe(JSON.stringify(hookResultsBody(a)));

describe('hookResultsJson', () => {
  it('writes what JSON.stringify writes: empty lists', () => same({ before: [], after: [], failed: false }));

  it('checks with data, errors, and every hook member', () =>
    same({
      before: [
        hook({
          id: 'input_guardrails[0]',
          checks: [
            { id: 'default.wordCount', verdict: true, data: { count: 3, minWords: 1, maxWords: 10 }, error: null, execution_time: 0.021, transformed: false },
            { id: 'default.webhook', verdict: false, data: null, error: 'timed out after 5000 ms', execution_time: 5000.1, transformed: false },
          ],
          feedback: { value: -1, weight: 0.5, metadata: { why: 'x' } },
        }),
      ],
      after: [hook({ id: 'output_guardrails[1]', deny: true, checks: [{ id: 'default.contains', verdict: false, data: { operator: 'none', found: ['a'], missing: [] }, error: null, execution_time: 0, transformed: true }], target: 'config.targets[0]' })],
      failed: true,
    }));

  it('escapes ids, errors and targets that need it, and writes non-finite numbers as null', () =>
    same({
      before: [
        hook({
          id: 'my "hook" \\ ünïcode\n',
          execution_time: Number.NaN,
          checks: [{ id: 'default.webhook', verdict: false, data: { text: 'line\u2028sep', n: Infinity }, error: 'bad "reply" \u0001', execution_time: Infinity, transformed: false }],
          target: 'a'.repeat(100),
        }),
      ],
      after: [],
      failed: false,
    }));

  it('every combination of data (written, generic, null, none), error, transformed, feedback and target', () => {
    const datas: [unknown, string | undefined][] = [[{ count: 2 }, '{"count":2}'], [{ n: [1] }, undefined], [null, undefined], [undefined, undefined]];
    for (const [data, written] of datas)
      for (const error of [null, 'boom'])
        for (const transformed of [false, true])
          for (const feedback of [undefined, { value: 1 }])
            for (const target of [undefined, 'config.targets[1]']) {
              const check: HookAccount['before'][number]['checks'][number] = { id: 'default.x', verdict: error === null, data, error, execution_time: 0.5, transformed };
              if (written !== undefined) check[DATA_JSON] = written;
              same({ before: [hook({ id: 'h', transformed, feedback, target, checks: [check, { ...check, id: 'default.y' }] })], after: [], failed: false });
            }
  });

  it('hooks with no checks, one check and three, in lists of one, two and three hooks', () => {
    const check = (id: string): HookResult['checks'][number] => ({ id, verdict: true, data: null, error: null, execution_time: 0.25, transformed: false });
    const hooks = [0, 1, 3].map((n) => hook({ id: `h${n}`, checks: Array.from({ length: n }, (_, i) => check(`default.c${i}`)) }));
    for (const before of [hooks.slice(0, 1), hooks.slice(1), hooks])
      for (const after of [[], hooks.slice(2).map((h) => ({ ...h, target: 'config' })), hooks]) same({ before, after, failed: false });
  });

  it('data of any shape: arrays, nested objects, strings, undefined', () =>
    same({
      before: [
        hook({
          checks: [
            { id: 'a', verdict: true, data: [1, 'two', { three: [3] }], error: null, execution_time: 1, transformed: false },
            { id: 'b', verdict: true, data: 'plain', error: null, execution_time: 1, transformed: false },
            { id: 'c', verdict: true, data: undefined, error: null, execution_time: 1, transformed: false },
          ],
        }),
      ],
      after: [],
      failed: false,
    }));
});

describe('appendHookResults: the results written after a head, as a value or as a member', () => {
  const account: HookAccount = {
    before: [hook({ id: 'in', checks: [{ id: 'default.wordCount', verdict: true, data: { count: 1 }, error: null, execution_time: 0.01, transformed: false }] })],
    after: [hook({ id: 'out', verdict: false, target: 'config' })],
    failed: true,
  };
  const results = JSON.stringify(hookResultsBody(account));
  it.each([
    ['value', false, `${results}`],
    ['value', true, `${results}}`],
    ['first', true, `"hook_results":${results}}`],
    ['next', true, `,"hook_results":${results}}`],
    ['next', false, `,"hook_results":${results}`],
  ] as const)('member %s, object closed: %s', (member, close, expected) => {
    expect(appendHookResults('{"id":"x"', account, member, close)).toBe(`{"id":"x"${expected}`);
  });

  it('spliced into an answer, the whole text parses to the answer with the results', () => {
    const answer = '{"id":"chatcmpl-1","choices":[{"message":{"content":"héllo 🙂"}}]}';
    const text = appendHookResults(answer.slice(0, answer.lastIndexOf('}')), account, 'next', true);
    expect(JSON.parse(text)).toEqual({ ...JSON.parse(answer), hook_results: JSON.parse(results) });
  });
});

describe('hookResultsJson: shared heads', () => {
  it('the same ids with every verdict, deny and async give each its own text', () => {
    for (const verdict of [true, false])
      for (const deny of [true, false])
        for (const async of [true, false])
          same({
            before: [hook({ id: 'shared', verdict, deny, async, checks: [{ id: 'default.notNull', verdict: !verdict, data: null, error: null, execution_time: 0.1, transformed: deny }] })],
            after: [hook({ id: 'shared', verdict: !verdict, deny: !deny, async, checks: [{ id: 'default.notNull', verdict, data: null, error: null, execution_time: 0.2, transformed: false }], target: 'config.targets[0]' })],
            failed: false,
          });
  });
});

describe('checks that write their data as JSON text', () => {
  const cases: [string, unknown, string[]][] = [
    ['default.wordCount', { minWords: 1, maxWords: 3 }, ['', 'one', 'one two three four']],
    ['default.characterCount', { minCharacters: 2, maxCharacters: 10 }, ['', 'héllo 🙂', 'x'.repeat(20)]],
    ['default.sentenceCount', {}, ['Hi. How are you?', '...', 'no end']],
    ['default.regexMatch', { rule: '\\d{3}-\\d{2}-\\d{4}' }, ['nothing', 'ssn 123-45-6789 here']],
    ['default.regexMatch', { rule: '\\d+', not: true }, ['a1', 'none']],
    ['default.contains', { words: ['alpha', 'beta "q"'], operator: 'none' }, ['neither', 'alpha only', 'alpha and beta "q"']],
  ];
  it.each(cases)('%s %j: DATA_JSON is exactly JSON.stringify(data), and the hook results carry it', async (id, params, texts) => {
    for (const text of texts) {
      const input = chatRequest(text);
      const resolved = resolveCheck(id, params, 'p');
      const { result } = settleCheckSync(resolved, input, deps());
      // written by the check, or (contains with some words found) left to the generic serialiser
      if (result[DATA_JSON] !== undefined) expect(result[DATA_JSON], `${id} on ${JSON.stringify(text)}`).toBe(JSON.stringify(result.data));
      else expect([id, text]).toEqual(['default.contains', 'alpha only']);
      same({ before: [hook({ checks: [result] })], after: [], failed: false });
    }
  });
});
