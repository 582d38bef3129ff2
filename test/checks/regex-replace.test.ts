import { describe, expect, it } from 'vitest';
import { compileBoundedRegex, maxSearchLength, MAX_REGEX_INPUT } from '../../src/util/bounded-regex.js';
import { requestInput } from '../../src/checks/text.js';
import { chatRequest, chatResponse, expectInvalid, run } from './_helpers.js';

describe('regexReplace', () => {
  it('replaces every match in every message and part, passes, counts replacements', async () => {
    const input = requestInput({
      endpoint: 'chat',
      body: {
        model: 'm',
        messages: [
          { role: 'system', content: 'key sk-1 and sk-2' },
          { role: 'user', content: [{ type: 'text', text: 'mine is sk-3' }, { type: 'image_url', image_url: { url: 'u' } }] },
        ],
      },
    });
    const out = await run('regexReplace', { rule: 'sk-\\d', redactText: '[KEY]' }, input);
    expect(out.verdict).toBe(true);
    expect(out.data).toEqual({ replacements: 3 });
    expect(out.transformed?.request?.body).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'key [KEY] and [KEY]' },
        { role: 'user', content: [{ type: 'text', text: 'mine is [KEY]' }, { type: 'image_url', image_url: { url: 'u' } }] },
      ],
    });
    // The input body is not changed in place.
    expect((input.request.body!.messages as { content: string }[])[0]!.content).toBe('key sk-1 and sk-2');
  });

  it('changes nothing when nothing matches (no transformed)', async () => {
    const out = await run('regexReplace', { rule: 'zzz', redactText: 'x' }, chatRequest('hello'));
    expect(out.transformed).toBeUndefined();
    expect(out.data).toEqual({ replacements: 0 });
  });

  it('rewrites the answer in the response phase; redactText defaults to [REDACTED]', async () => {
    const out = await run('regexReplace', { rule: '\\d+' }, chatResponse('call 555 now'));
    expect(out.transformed?.response?.body).toMatchObject({ choices: [{ message: { content: 'call [REDACTED] now' } }] });
  });

  it('inserts redactText literally and replaces a match across character 4,096 once', async () => {
    const text = 'a'.repeat(MAX_REGEX_INPUT - 3) + 'SECRET' + 'b'.repeat(MAX_REGEX_INPUT);
    const out = await run('regexReplace', { rule: 'SECRET', redactText: '$1' }, chatRequest(text));
    const content = (out.transformed!.request!.body.messages as { content: string }[])[0]!.content;
    expect(content).toBe('a'.repeat(MAX_REGEX_INPUT - 3) + '$1' + 'b'.repeat(MAX_REGEX_INPUT));
  });

  it('padding cannot hide a match: a greedy rule across character 4,096 or at the end of a long text is redacted whole', async () => {
    const contentOf = async (text: string) =>
      ((await run('regexReplace', { rule: 'secret.*', redactText: 'X' }, chatRequest(text))).transformed!.request!.body.messages as { content: string }[])[0]!.content;
    const pad = 'p'.repeat(MAX_REGEX_INPUT - 3);
    expect(await contentOf(pad + 'secret' + 'y'.repeat(MAX_REGEX_INPUT * 2))).toBe(pad + 'X');
    expect(await contentOf('p'.repeat(MAX_REGEX_INPUT * 3) + 'secret=hunter2')).toBe('p'.repeat(MAX_REGEX_INPUT * 3) + 'X');
    // several long matches on separate lines (`.` stops at a newline)
    const lines = ['a'.repeat(5000), 'secret ' + 'b'.repeat(6000), 'c'.repeat(100), 'the secret: ' + 'd'.repeat(9000)].join('\n');
    const out = await run('regexReplace', { rule: 'secret.*', redactText: 'X' }, chatRequest(lines));
    expect(out.data).toEqual({ replacements: 2 });
    const content = (out.transformed!.request!.body.messages as { content: string }[])[0]!.content;
    expect(content).toBe(['a'.repeat(5000), 'X', 'c'.repeat(100), 'the X'].join('\n'));
  });

  it('a text longer than the rule searches is not passed unredacted: the check throws (the hook fails closed)', async () => {
    const max = maxSearchLength(compileBoundedRegex('secret', 'rule'));
    await expect(run('regexReplace', { rule: 'secret' }, chatRequest('x'.repeat(max + 1) + 'secret'))).rejects.toThrow(/searches at most/);
    const ok = await run('regexReplace', { rule: 'secret' }, chatRequest('x'.repeat(max - 6) + 'secret'));
    expect(ok.data).toEqual({ replacements: 1 });
  });

  it('refuses bad parameters, naming the path', () => {
    expectInvalid('regexReplace', { redactText: 'x' }, 'rule');
    expectInvalid('regexReplace', { rule: '[', redactText: 'x' }, 'rule');
    expectInvalid('regexReplace', { rule: 'a', redactText: 5 }, 'redactText');
    expectInvalid('regexReplace', { rule: 'a', not: true }, '', /not/);
  });
});
