import { describe, expect, it } from 'vitest';
import { compileBoundedRegex, findBounded, MAX_REGEX_INPUT } from '../../src/util/bounded-regex.js';
import { requestInput } from '../../src/checks/text.js';
import { resolveCheck, runCheck } from '../../src/checks/registry.js';
import { DATA_JSON } from '../../src/checks/types.js';
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
    expect([a.verdict, a.data, a[DATA_JSON]]).toEqual([true, { matched: false }, '{"matched":false}']);
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

  it('^, $ and \\b mean the ends of the text and real word edges, not the cuts between windows', async () => {
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

  it('finds a match of up to half a window wherever it sits', async () => {
    const needle = 'N' + 'e'.repeat(MAX_REGEX_INPUT / 2 - 4) + 'D';
    for (let at = 0; at < MAX_REGEX_INPUT * 2; at += 331) {
      const text = 'x'.repeat(at) + needle + 'x'.repeat(MAX_REGEX_INPUT * 2);
      expect((await run('regexMatch', { rule: 'Ne+D' }, chatRequest(text))).data, `at ${at}`).toEqual({ matched: true, offset: at });
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
    expect(() => findBounded(re, 'a'.repeat(MAX_REGEX_INPUT * 8), Infinity, 0)).toThrow(/gave up after 0 ms/);
    expect(findBounded(re, 'xxaxx')).toEqual([[2, 3]]);
  });
});
