import { describe, expect, it } from 'vitest';
import { Subject, lastValueFrom, of, throwError, toArray, type Observable } from 'rxjs';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { backgroundStage } from '../../src/pipeline/background-stage.js';
import { newContext, type RequestContext } from '../../src/pipeline/context.js';
import { BackgroundRuns } from '../../src/pipeline/background-runs.js';
import { storedResponses, type ResponsesDeps } from '../../src/pipeline/response-stage.js';
import type { Run } from '../../src/pipeline/stage.js';
import { memoryResponseStore } from '../../src/state/memory/response-store.js';
import { ResponsesService } from '../../src/management/responses.js';
import type { StoredResponse } from '../../src/state/response-store.js';
import type { AnswerMeta, GatewayEvent } from '../../src/upstream/events.js';
import type { ProviderRequest } from '../../src/providers/types.js';

const META: AnswerMeta = { provider: 'openai', target: 'config', retries: 0 };
const KEY = { name: 'team-a', workspace_id: 'ws-a', organisation_id: 'org-1' };
const API_KEY = { name: 'team-a', workspace_id: 'ws-a', organisation_id: 'org-1' };
const text = (t: string) => ({ id: 'msg_o', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: t, annotations: [] }] });
const answer = (id: string, output: unknown[] = [text('ok')]): GatewayEvent => ({ type: 'json', status: 200, body: { id, object: 'response', status: 'completed', model: 'm', output }, meta: META });

/** The stage over a memory store; each write lands at once and is awaited through `stored(id, status)`. */
function setup(limits = { max: 10, maxPerKey: 10 }) {
  const store = memoryResponseStore({ maxBytes: 1 << 20 });
  const waiting: { id: string; status: string; resolve: (r: StoredResponse) => void }[] = [];
  const put = store.put.bind(store);
  const puts: StoredResponse[] = [];
  store.put = async (r) => {
    puts.push(r);
    await put(r);
    for (const w of waiting.filter((x) => x.id === r.response.id && x.status === r.response.status)) w.resolve(r);
  };
  const deps: ResponsesDeps = { store, background: new BackgroundRuns(limits), now: () => 1_700_000_000_000 };
  const stored = async (id: string, status: string) => {
    const now = await store.get(id);
    if (now?.response.status === status) return now;
    return new Promise<StoredResponse>((resolve) => waiting.push({ id, status, resolve }));
  };
  const ctxOf = (body: Record<string, unknown>): RequestContext => {
    const request: ProviderRequest = { endpoint: 'responses', body, stream: false, headers: {} };
    const ctx = newContext('trace', request, 0, '/v1/responses');
    (ctx as { key?: unknown }).key = KEY;
    return ctx;
  };
  /** The stored-responses stage, (the usage limit's place,) the background stage, then `inner` (the plan). */
  const stages = (inner: Run, refuse?: GatewayError): Run => {
    const background = backgroundStage(undefined)(inner);
    return storedResponses(deps)((ctx) => (refuse ? throwError(() => refuse) : background(ctx)));
  };
  return { store, deps, stored, ctxOf, puts, stages, service: new ResponsesService(store, deps.background) };
}

describe('stored responses stage', () => {
  it('other endpoints pass untouched, and store: false records nothing', async () => {
    const s = setup();
    const run = storedResponses(s.deps)(() => of(answer('resp_n')));
    const chat = s.ctxOf({ model: 'm' });
    chat.request = { ...chat.request, endpoint: 'chat' };
    await lastValueFrom(run(chat));
    await lastValueFrom(run(s.ctxOf({ model: 'm', input: 'hi', store: false })));
    expect(await s.store.get('resp_n')).toBeUndefined();
  });

  it('previous_response_id: the chain rebuilt before its own input, without the earlier instructions, and echoed', async () => {
    const s = setup();
    const seen: Record<string, unknown>[] = [];
    const inner = (ctx: RequestContext): Observable<GatewayEvent> => {
      seen.push(ctx.request.body!);
      return of(answer(`resp_${seen.length}`, [text(`answer ${seen.length}`)]));
    };
    const run = storedResponses(s.deps)(inner);
    await lastValueFrom(run(s.ctxOf({ model: 'm', input: 'first', instructions: 'be terse' })));
    await s.stored('resp_1', 'completed');
    await lastValueFrom(run(s.ctxOf({ model: 'm', input: [{ role: 'user', content: 'second' }], previous_response_id: 'resp_1' })));
    await s.stored('resp_2', 'completed');
    await lastValueFrom(run(s.ctxOf({ model: 'm', input: 'third', previous_response_id: 'resp_2', instructions: 'now verbose' })));
    expect(seen[2]).toEqual({
      model: 'm',
      instructions: 'now verbose',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'answer 1', annotations: [] }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'second' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'answer 2', annotations: [] }] },
        { type: 'message', role: 'user', content: 'third' },
      ],
    });
    const third = await s.stored('resp_3', 'completed');
    expect(third.response).toMatchObject({ previous_response_id: 'resp_2', instructions: 'now verbose' });
    expect(third.input_items).toHaveLength(1);
  });

  it('an unknown previous_response_id, or another tenant\'s, is a 404 naming it; the upstream is not called', async () => {
    const s = setup();
    await s.store.put({ response: { id: 'resp_other', object: 'response', output: [] }, input_items: [], owner: { workspace_id: 'ws-b', organisation_id: 'org-1' } });
    let called = 0;
    const run = storedResponses(s.deps)(() => (called++, of(answer('x'))));
    for (const id of ['resp_missing', 'resp_other']) {
      await expect(lastValueFrom(run(s.ctxOf({ model: 'm', input: 'hi', previous_response_id: id })))).rejects.toMatchObject({ code: 'response_not_found', param: 'previous_response_id' });
    }
    expect(called).toBe(0);
  });

  it('background: answered queued, stored in_progress before the plan runs, then completed', async () => {
    const s = setup();
    const upstream = new Subject<GatewayEvent>();
    let planRuns!: () => void;
    const planRan = new Promise<void>((r) => (planRuns = r));
    const run = s.stages(() => (planRuns(), upstream));
    const events = await lastValueFrom(run(s.ctxOf({ model: 'm', input: 'hi', background: true, metadata: { k: 'v' } })).pipe(toArray()));
    expect(events).toHaveLength(1);
    const queued = (events[0] as { body: Record<string, unknown> }).body;
    expect(queued).toMatchObject({ object: 'response', status: 'queued', background: true, metadata: { k: 'v' }, output: [] });
    const id = queued.id as string;
    await planRan;
    expect(s.puts.map((p) => p.response.status)).toEqual(['queued', 'in_progress']);
    expect((await s.service.get(id, {}, API_KEY)).status).toBe('in_progress');
    upstream.next(answer('resp_from_upstream'));
    upstream.complete();
    const done = await s.stored(id, 'completed');
    expect(done.response).toMatchObject({ id, status: 'completed', background: true, output: [text('ok')] });
    expect(s.deps.background.size).toBe(0);
  });

  it('background refused before it starts (a usage limit): the error is the answer; nothing stored, no place held', async () => {
    const s = setup({ max: 1, maxPerKey: 1 });
    const refused = new GatewayError('usage_limit_exceeded', 'over');
    const run = s.stages(() => of(answer('x')), refused);
    await expect(lastValueFrom(run(s.ctxOf({ model: 'm', input: 'hi', background: true })))).rejects.toBe(refused);
    expect(s.puts).toEqual([]);
    expect(s.deps.background.size).toBe(0);
  });

  it('cancel aborts the upstream call and leaves the response cancelled; a finished one is answered as stored', async () => {
    const s = setup();
    const upstream = new Subject<GatewayEvent>();
    const run = s.stages(() => upstream);
    const events = await lastValueFrom(run(s.ctxOf({ model: 'm', input: 'hi', background: true })).pipe(toArray()));
    const id = (events[0] as { body: { id: string } }).body.id;
    await s.stored(id, 'in_progress');
    const cancelled = await s.service.cancel(id, API_KEY);
    expect(cancelled).toMatchObject({ id, status: 'cancelled' });
    expect(upstream.observed).toBe(false);
    expect((await s.stored(id, 'cancelled')).response.status).toBe('cancelled');
    expect(await s.service.cancel(id, API_KEY)).toMatchObject({ status: 'cancelled' });
    await expect(s.service.cancel(id, { name: 'b', workspace_id: 'ws-b', organisation_id: 'org-1' })).rejects.toMatchObject({ code: 'response_not_found' });
  });

  it('background is bounded per key and in all: 429 beyond, a place frees when a run ends', async () => {
    const s = setup({ max: 3, maxPerKey: 2 });
    const upstreams: Subject<GatewayEvent>[] = [];
    const run = s.stages(() => {
      const u = new Subject<GatewayEvent>();
      upstreams.push(u);
      return u;
    });
    const start = (name: string) => {
      const ctx = s.ctxOf({ model: 'm', input: 'hi', background: true });
      (ctx as { key?: unknown }).key = { ...KEY, name };
      return lastValueFrom(run(ctx));
    };
    await start('a');
    await start('a');
    await expect(start('a')).rejects.toMatchObject({ code: 'too_many_background_responses', status: 429 });
    await start('b');
    await expect(start('c')).rejects.toMatchObject({ code: 'too_many_background_responses' });
    upstreams[0]!.error(new Error('upstream failed'));
    await start('c');
    expect(s.deps.background.size).toBe(3);
  });

  it('background with stream, or with store: false, is a 400 naming background', async () => {
    const s = setup();
    const run = storedResponses(s.deps)(() => of(answer('x')));
    for (const extra of [{ stream: true }, { store: false }]) {
      await expect(lastValueFrom(run(s.ctxOf({ model: 'm', input: 'hi', background: true, ...extra })))).rejects.toMatchObject({ code: 'invalid_request_body', param: 'background' });
    }
  });
});
