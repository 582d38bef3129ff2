import { describe, expect, it } from 'vitest';
import { Subject, firstValueFrom, lastValueFrom, toArray, type Observable } from 'rxjs';
import { recordResponse, type RecordResponseOptions } from '../../src/operators/record-response.js';
import { inputItems } from '../../src/operators/response-object.js';
import { memoryResponseStore } from '../../src/state/memory/response-store.js';
import type { StoredResponse } from '../../src/state/response-store.js';
import type { AnswerMeta, GatewayEvent } from '../../src/upstream/events.js';
import { GatewayError } from '../../src/errors/gateway-error.js';

const META: AnswerMeta = { provider: 'openai', target: 'config', retries: 0 };
const BODY = { model: 'gpt-4o-mini', input: 'hello', instructions: 'be brief', metadata: { a: '1' } };
const OWNER = { workspace_id: 'ws-a', organisation_id: 'org-1' };

const message = (text: string) => ({ id: 'msg_out', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
const USAGE = { input_tokens: 3, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 5 };
const responseObj = (id: string, status: string, output: unknown[] = [], extra: Record<string, unknown> = {}) => ({ id, object: 'response', created_at: 1_700_000_000, status, model: 'gpt-4o-mini', output, ...extra });

let seq = 0;
const ev = (type: string, fields: Record<string, unknown>): GatewayEvent => ({ type: 'chunk', event: type, data: JSON.stringify({ type, sequence_number: seq++, ...fields }) });

/** A recorder over a memory store; `last()` resolves with the record once `n` writes have landed. */
function harness(extra: Partial<RecordResponseOptions> = {}) {
  const store = memoryResponseStore({ maxBytes: 1 << 20 });
  const writes: StoredResponse[] = [];
  const waiters: { n: number; resolve: (r: StoredResponse) => void }[] = [];
  const options: RecordResponseOptions = {
    store,
    body: BODY,
    inputItems: inputItems(BODY.input),
    owner: OWNER,
    now: () => 1_700_000_123_000,
    abandoned: { status: 'incomplete', incomplete_details: { reason: 'client_cancelled' } },
    written: (r, e) => {
      if (e) throw e;
      writes.push(r);
      for (const w of waiters.filter((x) => writes.length >= x.n)) w.resolve(r);
    },
    ...extra,
  };
  const upstream = new Subject<GatewayEvent>();
  const answer: Observable<GatewayEvent> = upstream.pipe(recordResponse(options));
  const after = (n: number) => new Promise<StoredResponse>((resolve) => (writes.length >= n ? resolve(writes[n - 1]!) : waiters.push({ n, resolve })));
  return { store, writes, upstream, answer, after };
}

describe('recordResponse', () => {
  it('a JSON answer is stored completed, with every required field and its defaults', async () => {
    const h = harness();
    const answered = lastValueFrom(h.answer);
    h.upstream.next({ type: 'json', status: 200, body: responseObj('resp_1', 'completed', [message('hi')], { usage: USAGE }), meta: META });
    h.upstream.complete();
    await answered;
    const r = await h.after(1);
    expect(r.owner).toEqual(OWNER);
    expect(r.input_items).toEqual([{ id: expect.stringMatching(/^msg_[0-9a-f]{48}$/), type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] }]);
    expect(r.response).toEqual({
      id: 'resp_1',
      object: 'response',
      created_at: 1_700_000_000,
      status: 'completed',
      model: 'gpt-4o-mini',
      output: [message('hi')],
      usage: USAGE,
      instructions: 'be brief',
      metadata: { a: '1' },
      temperature: 1,
      top_p: 1,
      max_output_tokens: null,
      tools: [],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      truncation: 'disabled',
      text: { format: { type: 'text' } },
      reasoning: { effort: null, summary: null },
      user: null,
      store: true,
      error: null,
      incomplete_details: null,
      previous_response_id: null,
      background: false,
      completed_at: null,
      presence_penalty: 0,
      frequency_penalty: 0,
      top_logprobs: 0,
      max_tool_calls: null,
      service_tier: 'default',
      safety_identifier: null,
      prompt_cache_key: null,
    });
    expect(await h.store.get('resp_1')).toEqual(r);
  });

  it('a stream is stored in_progress at response.created, then completed', async () => {
    const h = harness();
    const answered = lastValueFrom(h.answer.pipe(toArray()));
    h.upstream.next({ type: 'stream-start', meta: META });
    h.upstream.next(ev('response.created', { response: responseObj('resp_s', 'in_progress') }));
    expect((await h.after(1)).response.status).toBe('in_progress');
    h.upstream.next(ev('response.output_text.delta', { item_id: 'msg_out', output_index: 0, content_index: 0, delta: 'hi' }));
    h.upstream.next(ev('response.output_item.done', { output_index: 0, item: message('hi') }));
    h.upstream.next(ev('response.completed', { response: responseObj('resp_s', 'completed', [message('hi')], { usage: USAGE }) }));
    h.upstream.complete();
    expect(await answered).toHaveLength(5);
    const r = await h.after(2);
    expect(r.response).toMatchObject({ id: 'resp_s', status: 'completed', output: [message('hi')], usage: USAGE, tool_choice: 'auto' });
    expect(h.writes).toHaveLength(2);
  });

  it('response.incomplete keeps incomplete_details.reason; response.failed keeps its error', async () => {
    for (const [type, extra] of [
      ['response.incomplete', { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }],
      ['response.failed', { status: 'failed', error: { code: 'server_error', message: 'upstream broke' } }],
    ] as const) {
      const h = harness();
      const answered = lastValueFrom(h.answer.pipe(toArray()));
      h.upstream.next({ type: 'stream-start', meta: META });
      h.upstream.next(ev(type, { response: responseObj('resp_x', extra.status, [], extra) }));
      h.upstream.complete();
      await answered;
      expect((await h.after(1)).response).toMatchObject(extra);
    }
  });

  it('an upstream error after response.created leaves failed with server_error and the output it had', async () => {
    const h = harness();
    const answered = lastValueFrom(h.answer).catch((e: unknown) => e);
    h.upstream.next({ type: 'stream-start', meta: META });
    h.upstream.next(ev('response.created', { response: responseObj('resp_f', 'in_progress') }));
    h.upstream.next(ev('response.output_item.done', { output_index: 0, item: message('partial') }));
    h.upstream.error(new GatewayError('stream_interrupted'));
    expect(await answered).toBeInstanceOf(GatewayError);
    const r = await h.after(2);
    expect(r.response).toMatchObject({ id: 'resp_f', status: 'failed', error: { code: 'server_error', message: expect.stringContaining('ended before') }, output: [message('partial')] });
  });

  it('a stream that ends without its final event is stored failed, never in_progress', async () => {
    const h = harness();
    const answered = lastValueFrom(h.answer.pipe(toArray()));
    h.upstream.next({ type: 'stream-start', meta: META });
    h.upstream.next(ev('response.created', { response: responseObj('resp_cut', 'in_progress') }));
    h.upstream.complete();
    await answered;
    expect((await h.after(2)).response).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
  });

  it('a client that leaves mid-stream leaves the abandoned status (incomplete), never in_progress', async () => {
    const h = harness();
    const sub = h.answer.subscribe();
    h.upstream.next({ type: 'stream-start', meta: META });
    h.upstream.next(ev('response.created', { response: responseObj('resp_gone', 'in_progress') }));
    sub.unsubscribe();
    expect(h.upstream.observed).toBe(false);
    expect((await h.after(2)).response).toMatchObject({ id: 'resp_gone', status: 'incomplete', incomplete_details: { reason: 'client_cancelled' } });
  });

  it('an error before anything named the response stores nothing', async () => {
    const h = harness();
    const answered = lastValueFrom(h.answer).catch(() => 'failed');
    h.upstream.error(new GatewayError('upstream_unreachable'));
    expect(await answered).toBe('failed');
    expect(h.writes).toHaveLength(0);
  });

  it('a cached answer is a new response: answered and stored under a fresh id', async () => {
    const h = harness();
    const answered = firstValueFrom(h.answer);
    h.upstream.next({ type: 'json', status: 200, body: responseObj('resp_old', 'completed', [message('hi')]), raw: '{"id":"resp_old"}', meta: { ...META, cacheStatus: 'HIT' } });
    const out = (await answered) as Extract<GatewayEvent, { type: 'json' }>;
    const id = (out.body as { id: string }).id;
    expect(id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(out.raw).toBeUndefined();
    expect((await h.after(1)).response.id).toBe(id);
  });

  it('an announced id (background) names the stream and the record', async () => {
    const h = harness({ id: 'resp_announced', body: { ...BODY, background: true } });
    const answered = lastValueFrom(h.answer.pipe(toArray()));
    h.upstream.next({ type: 'stream-start', meta: META });
    h.upstream.next(ev('response.completed', { response: responseObj('resp_upstream', 'completed') }));
    h.upstream.complete();
    const events = await answered;
    expect(JSON.parse((events[1] as { data: string }).data).response.id).toBe('resp_announced');
    expect((await h.after(1)).response).toMatchObject({ id: 'resp_announced', background: true, status: 'completed' });
  });
});
