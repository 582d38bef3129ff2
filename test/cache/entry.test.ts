import { describe, expect, it } from 'vitest';
import { EntryRecorder, parseEntry, replay, type CacheEntry } from '../../src/cache/entry.js';
import type { AnswerMeta, GatewayEvent } from '../../src/upstream/events.js';

const meta: AnswerMeta = { provider: 'openai', target: 'config.targets[1]', retries: 2, cacheStatus: 'MISS' };
const usage = { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 };

const chatBody = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 10,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, logprobs: null, finish_reason: 'stop' }],
  usage,
};
// Spacing and key order a re-serialisation would not keep.
const chatRaw = '{ "model": "gpt-4o-mini",  "id": "chatcmpl-1", "object": "chat.completion", "created": 10, "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello there"}, "logprobs": null, "finish_reason": "stop"}], "usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6} }';

const chunkTexts = [
  { id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 11, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
  { id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 11, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content: 'Str' }, finish_reason: null }] },
  { id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 11, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content: 'eamed' }, finish_reason: 'stop' }] },
  { id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 11, model: 'gpt-4o-mini', choices: [], usage },
].map((c) => JSON.stringify(c));

function record(events: GatewayEvent[]): CacheEntry | undefined {
  const rec = new EntryRecorder();
  for (const ev of events) rec.record(ev);
  return rec.entry();
}

const jsonEntry = (): CacheEntry => record([{ type: 'json', status: 200, body: chatBody, raw: chatRaw, meta, usage }])!;
const streamEntry = (): CacheEntry =>
  record([
    { type: 'stream-start', meta },
    ...chunkTexts.slice(0, 3).map((data) => ({ type: 'chunk' as const, data })),
    { type: 'chunk', data: chunkTexts[3]!, usage },
  ])!;

describe('EntryRecorder', () => {
  it('stores a JSON answer with its raw text verbatim, its status, usage and who answered', () => {
    expect(jsonEntry()).toEqual({ v: 1, kind: 'json', status: 200, provider: 'openai', target: 'config.targets[1]', body: chatRaw, usage });
  });

  it('serialises the body when there is no raw text', () => {
    const e = record([{ type: 'json', status: 201, body: { ok: true }, meta }]);
    expect(e).toEqual({ v: 1, kind: 'json', status: 201, provider: 'openai', target: 'config.targets[1]', body: '{"ok":true}' });
  });

  it('stores a stream as its chunks in order, skipping empty data, with the usage', () => {
    const e = record([
      { type: 'stream-start', meta },
      { type: 'chunk', data: chunkTexts[0]! },
      { type: 'chunk', data: '' },
      { type: 'chunk', data: chunkTexts[1]! },
      { type: 'chunk', data: chunkTexts[2]! },
      { type: 'chunk', data: chunkTexts[3]!, usage },
    ]);
    expect(e).toEqual({ v: 1, kind: 'stream', status: 200, provider: 'openai', target: 'config.targets[1]', chunks: chunkTexts, usage });
  });

  it.each([199, 302, 400, 404, 429, 500, 503])('refuses a %i answer', (status) => {
    expect(record([{ type: 'json', status, body: { error: { message: 'no' } }, meta }])).toBeUndefined();
  });

  it('refuses when nothing was recorded or only chunks without a start', () => {
    expect(record([])).toBeUndefined();
    expect(record([{ type: 'chunk', data: chunkTexts[0]! }])).toBeUndefined();
  });
});

describe('replay', () => {
  it('json → json: the raw text verbatim, the stored status, provider and target, the cache status', () => {
    const evs = replay({ ...jsonEntry(), status: 203 }, 'chat', false, 'HIT');
    expect(evs).toHaveLength(1);
    const ev = evs[0]!;
    expect(ev.type).toBe('json');
    if (ev.type !== 'json') return;
    expect(ev.raw).toBe(chatRaw);
    expect(ev.status).toBe(203);
    expect(ev.meta).toEqual({ provider: 'openai', target: 'config.targets[1]', retries: 0, cacheStatus: 'HIT' });
  });

  it('stream → stream: stream-start with meta, then the stored chunks verbatim', () => {
    const evs = replay(streamEntry(), 'chat', true, 'SEMANTIC_HIT', true);
    expect(evs).toEqual([
      { type: 'stream-start', meta: { provider: 'openai', target: 'config.targets[1]', retries: 0, cacheStatus: 'SEMANTIC_HIT' } },
      ...chunkTexts.map((data) => ({ type: 'chunk', data })),
    ]);
  });

  it('json → stream: synthesised chunks that carry the answer', () => {
    const evs = replay(jsonEntry(), 'chat', true, 'HIT', true);
    expect(evs[0]).toEqual({ type: 'stream-start', meta: { provider: 'openai', target: 'config.targets[1]', retries: 0, cacheStatus: 'HIT' } });
    const chunks = evs.slice(1).map((ev) => {
      expect(ev.type).toBe('chunk');
      return JSON.parse((ev as { data: string }).data);
    });
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c).toMatchObject({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'gpt-4o-mini' });
    const content = chunks.flatMap((c) => c.choices.map((ch: any) => ch.delta?.content ?? '')).join('');
    expect(content).toBe('Hello there');
    expect(chunks.flatMap((c) => c.choices.map((ch: any) => ch.finish_reason)).filter(Boolean)).toEqual(['stop']);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage });
  });

  it('a stream client that did not ask for usage gets no usage-only chunk', () => {
    for (const entry of [streamEntry(), jsonEntry()]) {
      const chunks = replay(entry, 'chat', true, 'HIT').slice(1).map((ev) => JSON.parse((ev as { data: string }).data));
      expect(chunks.length).toBeGreaterThan(0);
      expect(chunks.some((c) => Array.isArray(c.choices) && c.choices.length === 0)).toBe(false);
    }
  });

  it('a shared (parsed) stream entry replays the same on every hit, either usage choice, and is not changed', () => {
    const entry = parseEntry(JSON.stringify(streamEntry()))!;
    const before = structuredClone(entry);
    const data = (evs: GatewayEvent[]) => evs.slice(1).map((ev) => (ev as { data: string }).data);
    const withUsage = data(replay(entry, 'chat', true, 'HIT', true));
    const without = data(replay(entry, 'chat', true, 'HIT', false));
    expect(without).toEqual(chunkTexts.slice(0, 3));
    expect(withUsage.slice(0, 3)).toEqual(chunkTexts.slice(0, 3));
    expect(JSON.parse(withUsage[3]!)).toMatchObject({ choices: [], usage });
    expect(data(replay(entry, 'chat', true, 'HIT', false))).toEqual(without);
    expect(data(replay(entry, 'chat', true, 'HIT', true))).toEqual(withUsage);
    expect(entry).toEqual(before);
  });

  it('stream → json: the assembled answer, raw and body agreeing', () => {
    const evs = replay(streamEntry(), 'chat', false, 'HIT');
    expect(evs).toHaveLength(1);
    const ev = evs[0]!;
    if (ev.type !== 'json') throw new Error('expected json');
    expect(ev.status).toBe(200);
    expect(ev.meta).toEqual({ provider: 'openai', target: 'config.targets[1]', retries: 0, cacheStatus: 'HIT' });
    expect(ev.body).toEqual({
      id: 'chatcmpl-2',
      object: 'chat.completion',
      created: 11,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Streamed' }, logprobs: null, finish_reason: 'stop' }],
      usage,
    });
    expect(JSON.parse(ev.raw!)).toEqual(ev.body);
  });

  it('stream → json keeps the usage of a hidden usage chunk (recorded, not sent to the stream client)', () => {
    const e = record([
      { type: 'stream-start', meta },
      ...chunkTexts.slice(0, 3).map((data) => ({ type: 'chunk' as const, data })),
      { type: 'chunk', data: '', usage },
    ])!;
    expect(e.chunks).toEqual(chunkTexts.slice(0, 3));
    expect(e.usage).toEqual(usage);
    const ev = replay(e, 'chat', false, 'HIT')[0]!;
    if (ev.type !== 'json') throw new Error('expected json');
    expect((ev.body as any).usage).toEqual(usage);
    expect(JSON.parse(ev.raw!).usage).toEqual(usage);
  });

  it('completions stream → json assembles text', () => {
    const b = { id: 'cmpl-1', object: 'text_completion', created: 1, model: 'm' };
    const entry: CacheEntry = {
      v: 1,
      kind: 'stream',
      status: 200,
      provider: 'openai',
      target: 'config',
      chunks: [{ ...b, choices: [{ index: 0, text: 'ab', finish_reason: null }] }, { ...b, choices: [{ index: 0, text: 'cd', finish_reason: 'stop' }] }].map((c) => JSON.stringify(c)),
    };
    const ev = replay(entry, 'completions', false, 'HIT')[0]!;
    if (ev.type !== 'json') throw new Error('expected json');
    expect((ev.body as any).choices[0]).toMatchObject({ text: 'abcd', finish_reason: 'stop' });
  });

  it('a recorded entry survives the store (JSON text) and replays the same', () => {
    const e = parseEntry(JSON.stringify(streamEntry()))!;
    expect(replay(e, 'chat', true, 'HIT')).toEqual(replay(streamEntry(), 'chat', true, 'HIT'));
  });
});

describe('parseEntry', () => {
  it('accepts a stored entry', () => {
    expect(parseEntry(JSON.stringify(jsonEntry()))).toEqual(jsonEntry());
    expect(parseEntry(JSON.stringify(streamEntry()))).toEqual(streamEntry());
  });

  it.each([
    ['not JSON', '{nope'],
    ['empty', ''],
    ['null', 'null'],
    ['a number', '42'],
    ['a string', '"x"'],
    ['an array', '[]'],
    ['no version', JSON.stringify({ kind: 'json', status: 200, body: '{}' })],
    ['version 2', JSON.stringify({ v: 2, kind: 'json', status: 200, provider: 'p', target: 't', body: '{}' })],
    ['version "1"', JSON.stringify({ v: '1', kind: 'json', status: 200, provider: 'p', target: 't', body: '{}' })],
    ['unknown kind', JSON.stringify({ v: 1, kind: 'blob', status: 200, provider: 'p', target: 't' })],
    ['json without a body', JSON.stringify({ v: 1, kind: 'json', status: 200, provider: 'p', target: 't' })],
    ['json with a non-string body', JSON.stringify({ v: 1, kind: 'json', status: 200, provider: 'p', target: 't', body: { a: 1 } })],
    ['stream without chunks', JSON.stringify({ v: 1, kind: 'stream', status: 200, provider: 'p', target: 't' })],
    ['stream with non-string chunks', JSON.stringify({ v: 1, kind: 'stream', status: 200, provider: 'p', target: 't', chunks: [{}] })],
    ['no provider', JSON.stringify({ v: 1, kind: 'json', status: 200, target: 't', body: '{}' })],
    ['no status', JSON.stringify({ v: 1, kind: 'json', provider: 'p', target: 't', body: '{}' })],
  ])('rejects %s', (_name, text) => {
    expect(parseEntry(text)).toBeUndefined();
  });
});
