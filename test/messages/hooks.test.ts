/**
 * Guardrails and hooks on the Messages door, through the official Anthropic SDK: the top-level
 * `system` is read and rewritten as a chat request's system message is; output guardrails read a
 * Messages answer, JSON or stream, and a deny is a 446 in Anthropic's envelope with `hook_results`.
 */
import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { post } from '../helpers/http.js';
import { messageStream } from '../fakes/anthropic-server.js';
import { ANTHROPIC_KEY, useDoor } from './_door.js';

const door = useDoor();
const target = () => ({ provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: door.fake.baseUrl });
const configured = (config: unknown): Anthropic => door.sdk({ 'x-gateway-virtual-key': null, 'x-gateway-config': JSON.stringify(config) });
const ask = (text: string, system?: Anthropic.MessageCreateParams['system']) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  ...(system === undefined ? {} : { system }),
  messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text }] }],
});
type ApiError = InstanceType<typeof Anthropic.APIError>;

const noSecrets = () => ({ ...target(), input_guardrails: [{ id: 'no-secrets', 'default.contains': { operator: 'none', words: ['classified'] }, deny: true }] });
const short = () => ({ ...target(), output_guardrails: [{ id: 'short', 'default.wordCount': { maxWords: 3 }, deny: true }] });

describe('guardrails read the top-level system', () => {
  it.each([
    ['a string', 'This is classified.'],
    ['text blocks', [{ type: 'text' as const, text: 'Be brief.' }, { type: 'text' as const, text: 'This is classified.', cache_control: { type: 'ephemeral' as const } }]],
  ])('as %s: a denied word there is a 446 before any upstream call', async (_, system) => {
    const err = (await configured(noSecrets()).messages.create(ask('hello', system)).catch((e: unknown) => e)) as ApiError;
    expect(err.status).toBe(446);
    expect(door.fake.requests).toHaveLength(0);
    const ok = await configured(noSecrets()).messages.create(ask('hello', 'Be brief.'));
    expect(ok.content).toEqual([{ type: 'text', text: 'echo: hello' }]);
  });

  it('mutators rewrite it: regexReplace in a string and in text blocks (cache_control kept), addPrefix for the system role', async () => {
    const redact = { ...target(), input_guardrails: [{ id: 'redact', 'default.regexReplace': { rule: '\\d{4}-\\d{4}', redactText: '[ID]' } }] };
    await configured(redact).messages.create(ask('id 1111-2222', 'Staff id 3333-4444.'));
    const blocks = [{ type: 'text' as const, text: 'Staff id 3333-4444.', cache_control: { type: 'ephemeral' as const } }];
    await configured(redact).messages.create(ask('hi', blocks));
    const prefix = { ...target(), input_guardrails: [{ id: 'lang', 'default.addPrefix': { prefix: 'Answer in English. ', applyToRole: 'system' } }] };
    await configured(prefix).messages.create(ask('hi', 'Be brief.'));
    await configured(prefix).messages.create(ask('hi'));
    const sent = door.fake.requests.map((r) => r.body);
    expect(sent[0].system).toBe('Staff id [ID].');
    expect(sent[0].messages[0].content[0].text).toBe('id [ID]');
    expect(sent[1].system).toEqual([{ type: 'text', text: 'Staff id [ID].', cache_control: { type: 'ephemeral' } }]);
    expect(sent[2].system).toBe('Answer in English. Be brief.');
    expect(sent[3].system).toBe('Answer in English. ');
    expect(sent.every((b) => b.messages.every((m: { role: string }) => m.role === 'user'))).toBe(true);
  });
});

describe('output guardrails on Messages answers', () => {
  it('JSON: a pass answers with hook_results beside the message; a deny is a 446 with hook_results', async () => {
    const ok = await post(`${door.gw.url}/v1/messages`, door.gw.headers({ 'x-gateway-config': JSON.stringify(short()), 'anthropic-version': '2023-06-01' }), ask('hi'));
    expect(ok.status).toBe(200);
    expect(ok.json.content).toEqual([{ type: 'text', text: 'echo: hi' }]);
    expect(ok.json.hook_results.after_request_hooks[0]).toMatchObject({ id: 'short', verdict: true });
    const err = (await configured(short()).messages.create(ask('four words right here')).catch((e: unknown) => e)) as ApiError;
    expect(err.status).toBe(446);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'hooks_failed' } });
    expect((err.error as { hook_results: { after_request_hooks: unknown[] } }).hook_results.after_request_hooks[0]).toMatchObject({ id: 'short', verdict: false, deny: true });
  });

  it('a stream that passes: held, checked, then sent as Anthropic sent it; messages.stream() reads it whole', async () => {
    const frames = messageStream([{ text: ['ec', 'ho: hi'] }]);
    door.fake.enqueue('/v1/messages', { frames });
    const res = await post(`${door.gw.url}/v1/messages`, door.gw.headers({ 'x-gateway-config': JSON.stringify(short()), 'anthropic-version': '2023-06-01' }), { ...ask('hi'), stream: true });
    expect(res.status).toBe(200);
    expect(res.text.startsWith(frames.join(''))).toBe(true);
    expect(res.text.slice(frames.join('').length)).toMatch(/^: hook_results \{.*"verdict":true/);
    door.fake.enqueue('/v1/messages', { frames });
    const stream = configured(short()).messages.stream(ask('hi'));
    const events: string[] = [];
    stream.on('streamEvent', (e) => events.push(e.type));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'echo: hi' }]);
    expect(events).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
  });

  it('a stream that fails: a 446 in Anthropic’s envelope with hook_results, no event sent', async () => {
    door.fake.enqueue('/v1/messages', { frames: messageStream([{ text: ['echo: four ', 'words right here'] }]) });
    const res = await post(`${door.gw.url}/v1/messages`, door.gw.headers({ 'x-gateway-config': JSON.stringify(short()), 'anthropic-version': '2023-06-01' }), { ...ask('x'), stream: true });
    expect(res.status).toBe(446);
    expect(res.text).not.toContain('event:');
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'hooks_failed' } });
    expect(res.json.hook_results.after_request_hooks[0]).toMatchObject({ id: 'short', verdict: false, deny: true });
    door.fake.enqueue('/v1/messages', { frames: messageStream([{ text: ['echo: four ', 'words right here'] }]) });
    const err = (await configured(short()).messages.stream(ask('x')).finalMessage().catch((e: unknown) => e)) as ApiError;
    expect(err.status).toBe(446);
  });

  it('a mutator on a held stream (a deny beside it): the answer’s text rewritten, sent as Anthropic’s events', async () => {
    const redact = {
      ...target(),
      output_guardrails: [
        { id: 'redact', 'default.regexReplace': { rule: '\\d{4}', redactText: '[N]' } },
        { id: 'bounded', 'default.wordCount': { maxWords: 50 }, deny: true },
      ],
    };
    door.fake.enqueue('/v1/messages', { frames: messageStream([{ text: ['pin ', '1234 ok'] }]) });
    const stream = configured(redact).messages.stream(ask('x'));
    const events: string[] = [];
    stream.on('streamEvent', (e) => events.push(e.type));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'pin [N] ok' }]);
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
  });
});
