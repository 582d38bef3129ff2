import { describe, expect, it } from 'vitest';
import { requestRecord, type RequestRecordSource } from '../../src/http/request-record.js';

const PROMPT = 'never stored prompt';

const source = (over: Partial<RequestRecordSource> = {}): RequestRecordSource => ({
  traceId: 'trace-1',
  req: { method: 'POST', url: '/v1/chat/completions?api-version=1' },
  res: { statusCode: 200 },
  settings: { metadata: { _user: 'u1' } },
  ctx: {
    request: { stream: true, body: { model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }] } },
    outcome: {
      attempts: 3,
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
      hooks: { before: [{ id: 'pii', verdict: false, deny: true }], after: [{ id: 'words', verdict: true, deny: false, feedback: { value: 1 } }] },
      cost: 0.25,
    },
  },
  meta: { provider: 'anthropic', target: 'config.targets[1]', retries: 1, cacheStatus: 'MISS' },
  error: undefined,
  clientAborted: false,
  gatewayKey: { name: 'team-a', workspace_id: 'ws-a', organisation_id: 'org-1' },
  ...over,
});

describe('requestRecord', () => {
  it('takes every field from the exchange: scope, model, retries, hook verdicts, cost; path without query; no prompt', () => {
    const r = requestRecord(source(), 12.5, 1_700_000_000_000);
    expect(r).toEqual({
      time: 1_700_000_000_000,
      trace_id: 'trace-1',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      latency_ms: 12.5,
      metadata: { _user: 'u1' },
      key_name: 'team-a',
      workspace_id: 'ws-a',
      organisation_id: 'org-1',
      model: 'gpt-4o',
      stream: true,
      attempts: 3,
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
      cost: 0.25,
      hooks: [
        { id: 'pii', list: 'before_request_hooks', verdict: false, deny: true },
        { id: 'words', list: 'after_request_hooks', verdict: true, feedback: { value: 1 } },
      ],
      provider: 'anthropic',
      target: 'config.targets[1]',
      retries: 1,
      cache: 'MISS',
    });
    expect(JSON.stringify(r)).not.toContain(PROMPT);
  });

  it('a client that left is 499 with client_aborted; an error is kept; before the pipeline only the edge fields', () => {
    const left = requestRecord(source({ clientAborted: true }), 1, 0);
    expect([left.status, left.client_aborted]).toEqual([499, true]);
    const early = requestRecord(
      source({ ctx: undefined, meta: undefined, settings: {}, gatewayKey: undefined, res: { statusCode: 401 }, error: { code: 'missing_gateway_key', status: 401, message: 'm' } }),
      1,
      0,
    );
    expect(early).toEqual({ time: 0, trace_id: 'trace-1', method: 'POST', path: '/v1/chat/completions', status: 401, latency_ms: 1, error: { code: 'missing_gateway_key', status: 401, message: 'm' } });
  });

  it('a body whose model is not a string names no model; hooks that did not run are left out', () => {
    const r = requestRecord(source({ ctx: { request: { stream: false, body: { model: 7 } }, outcome: { attempts: 0, hooks: { before: [], after: [] } } } }), 1, 0);
    expect(r.model).toBeUndefined();
    expect(r.hooks).toBeUndefined();
  });
});
