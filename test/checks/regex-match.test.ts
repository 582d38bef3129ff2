import { firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { compileBoundedRegex, findBounded, maxSearchLength, MAX_REGEX_INPUT, MAX_REGEX_WORK, searchBudget } from '../../src/util/bounded-regex.js';
import { settleCheck } from '../../src/checks/settle.js';
import { later } from '../../src/util/now-or-later.js';
import { requestInput } from '../../src/checks/text.js';
import { resolveCheck, runCheck } from '../../src/checks/registry.js';
import { chatRequest, chatResponse, deps, expectInvalid, run, verdict } from './_helpers.js';

describe('regexMatch', () => {
  it('passes when the text matches, fails when it does not', async () => {
    expect(await verdict('regexMatch', { rule: '\\d{4}' }, chatRequest('pin 1234'))).toBe(true);
    expect(await verdict('regexMatch', { rule: '\\d{4}' }, chatRequest('no digits'))).toBe(false);
  });

  it('no match is one shared outcome, and with not: true one shared inverse (made once, frozen)', async () => {
    const never = new AbortController().signal;
    const check = resolveCheck('regexMatch', { rule: '\\d{3}-\\d{2}-\\d{4}', not: true }, 'p');
    const a = await runCheck(check, chatRequest('hello'), deps(), never);
    const b = await runCheck(check, chatRequest('hello again'), deps(), never);
    expect(b).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect([a.verdict, a.data]).toEqual([true, { matched: false }]);
    const hit = await runCheck(check, chatRequest('ssn 123-45-6789'), deps(), never);
    expect([hit.verdict, hit.data]).toEqual([false, { matched: true, offset: 4 }]);
  });

  it('not: true inverts (deny what matches)', async () => {
    expect(await verdict('regexMatch', { rule: 'secret', not: true }, chatRequest('a secret'))).toBe(false);
    expect(await verdict('regexMatch', { rule: 'secret', not: true }, chatRequest('nothing'))).toBe(true);
  });

  it('reads every message of the request, not only the last', async () => {
    const input = requestInput({
      endpoint: 'chat',
      body: { messages: [{ role: 'system', content: 'token ABC-123' }, { role: 'user', content: 'hi' }] },
    });
    expect(await verdict('regexMatch', { rule: 'ABC-\\d+' }, input)).toBe(true);
  });

  it('reads the answer in the response phase', async () => {
    expect(await verdict('regexMatch', { rule: '^yes' }, chatResponse('yes indeed'))).toBe(true);
    expect(await verdict('regexMatch', { rule: '^yes' }, chatResponse('no'))).toBe(false);
  });

  it('finds a match beyond the regex input cap (padding does not bypass it) and reports only its offset', async () => {
    const text = 'x'.repeat(MAX_REGEX_INPUT * 3 + 17) + 'NEEDLE';
    const out = await run('regexMatch', { rule: 'NEEDLE' }, chatRequest(text));
    expect(out.verdict).toBe(true);
    expect(out.data).toEqual({ matched: true, offset: MAX_REGEX_INPUT * 3 + 17 });
    expect(JSON.stringify(out.data)).not.toContain('NEEDLE');
  });

  it('^, $ and \\b mean the ends of the text and real word edges, wherever they sit in a long text', async () => {
    const pad = 'z'.repeat(MAX_REGEX_INPUT * 2);
    for (const cut of [MAX_REGEX_INPUT / 2 - 1, MAX_REGEX_INPUT / 2, MAX_REGEX_INPUT - 1, MAX_REGEX_INPUT]) {
      const text = 'y'.repeat(cut) + 'abc' + pad;
      expect(await verdict('regexMatch', { rule: '^abc' }, chatRequest(text)), `^ at ${cut}`).toBe(false);
      expect(await verdict('regexMatch', { rule: '\\babc' }, chatRequest(text)), `\\b at ${cut}`).toBe(false);
      const tail = pad.slice(0, cut) + 'abc' + 'y'.repeat(MAX_REGEX_INPUT);
      expect(await verdict('regexMatch', { rule: 'abc$' }, chatRequest(tail)), `$ at ${cut}`).toBe(false);
    }
    expect(await verdict('regexMatch', { rule: '^abc' }, chatRequest('abc' + pad))).toBe(true);
    expect(await verdict('regexMatch', { rule: 'abc$' }, chatRequest(pad + 'abc'))).toBe(true);
    expect(await verdict('regexMatch', { rule: '\\babc\\b' }, chatRequest(pad + ' abc ' + pad))).toBe(true);
  });

  it('padding cannot hide a match: a greedy rule matching across character 4,096, or at the end of a long text, denies', async () => {
    const deny = { rule: 'secret.*', not: true };
    // "secret" straddles character 4,096, and the greedy match runs to the end of the text
    const straddling = 'x'.repeat(MAX_REGEX_INPUT - 3) + 'secret' + 'y'.repeat(MAX_REGEX_INPUT * 2);
    expect(await verdict('regexMatch', deny, chatRequest(straddling))).toBe(false);
    expect((await run('regexMatch', { rule: 'secret.*' }, chatRequest(straddling))).data).toEqual({ matched: true, offset: MAX_REGEX_INPUT - 3 });
    // at the very end of a text over 4 KB, and at every offset across the first windows' edges
    for (let at = 0; at <= MAX_REGEX_INPUT * 2 + 8; at += 257) {
      const text = 'x'.repeat(MAX_REGEX_INPUT + at) + 'secret' + 'y'.repeat(at);
      expect(await verdict('regexMatch', deny, chatRequest(text)), `secret at ${MAX_REGEX_INPUT + at}`).toBe(false);
    }
    // a match longer than any window: "begin", 20,000 characters, "end"
    const long = 'x'.repeat(100) + 'begin' + 'y'.repeat(20_000) + 'end' + 'x'.repeat(100);
    expect(await verdict('regexMatch', { rule: 'begin[^z]*end', not: true }, chatRequest(long))).toBe(false);
    expect(await verdict('regexMatch', { rule: 'begin[^y]*end', not: true }, chatRequest(long))).toBe(true);
  });

  it('finds a match of any length wherever it sits, and reports the leftmost', async () => {
    for (const len of [2, MAX_REGEX_INPUT / 2, MAX_REGEX_INPUT * 3]) {
      const needle = 'N' + 'e'.repeat(len) + 'D';
      for (let at = 0; at < MAX_REGEX_INPUT * 2; at += 997) {
        const text = 'x'.repeat(at) + needle + 'x'.repeat(MAX_REGEX_INPUT) + needle;
        expect((await run('regexMatch', { rule: 'Ne+D' }, chatRequest(text))).data, `${len} at ${at}`).toEqual({ matched: true, offset: at });
      }
    }
  });

  it('a text longer than the rule searches is not passed unread: the check fails closed, with or without not', async () => {
    const re = compileBoundedRegex('secret', 'rule');
    const max = maxSearchLength(re);
    expect(max).toBe(Math.floor(MAX_REGEX_WORK / re.programSize()));
    expect(findBounded(re, 'x'.repeat(max - 6) + 'secret')).toEqual([[max - 6, max]]);
    expect(() => findBounded(re, 'x'.repeat(max + 1))).toThrow(/searches at most/);
    const text = 'x'.repeat(max + 1);
    for (const not of [false, true]) {
      const { result } = await firstValueFrom(later(settleCheck(resolveCheck('regexMatch', { rule: 'secret', not }, 'p'), chatRequest(text), deps())));
      expect(result.verdict, `not: ${not}`).toBe(false);
      expect(result.error).toMatch(/searches at most/);
      expect(result.error).not.toContain('xxxx');
    }
  });

  it('refuses a missing, invalid or too long rule, naming the path', () => {
    expectInvalid('regexMatch', {}, 'rule');
    expectInvalid('regexMatch', { rule: '(' }, 'rule', /invalid rule/);
    expectInvalid('regexMatch', { rule: 'a'.repeat(257) }, 'rule', /at most 256 characters/);
    expectInvalid('regexMatch', { rule: 'a', not: 'yes' }, 'not');
    expectInvalid('regexMatch', { rule: 'a', flags: 'i' }, '', /flags/);
  });

  it('runs on RE2: a pattern it cannot express (backreference, lookaround) is refused, naming the path', () => {
    for (const rule of ['(a)\\1', 'a(?=b)', 'a(?!b)', '(?<=a)b', '(?<!a)b']) {
      expectInvalid('regexMatch', { rule }, 'rule', /RE2 syntax/);
    }
    expectInvalid('regexMatch', { rule: '(.*a){200}' }, 'rule', /too large once compiled/);
  });

  it('patterns that backtrack exponentially answer at once, with the verdict RE2 gives', async () => {
    const evil = 'a'.repeat(64) + '!';
    for (const rule of ['^(a+)+$', '(a|aa)+$', '^(a|a?)+$', '^(\\w+\\s?)*$']) {
      expect(await verdict('regexMatch', { rule }, chatRequest(evil)), rule).toBe(false);
    }
    expect(await verdict('regexMatch', { rule: '^(a+)+!$' }, chatRequest(evil))).toBe(true);
  });

  it('a search that runs past its time budget throws (the hook fails closed), rather than hold the event loop', () => {
    const re = compileBoundedRegex('.*b|a', 'rule');
    expect(() => findBounded(re, 'a'.repeat(MAX_REGEX_INPUT), Infinity, searchBudget(-1))).toThrow(/gave up after -1 ms/);
    expect(findBounded(re, 'xxaxx')).toEqual([[2, 3]]);
  });
});
