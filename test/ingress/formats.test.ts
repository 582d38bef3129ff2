import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { INGRESS, OPENAI_FRAMING } from '../../src/ingress/index.js';
import { SSE_DONE, SSE_HEADERS, sseComment, sseData, sseError } from '../../src/upstream/sse-encode.js';

const byId = (id: string) => INGRESS.find((f) => f.id === id)!;

describe('ingress descriptors', () => {
  it('route every endpoint once, by method and path', () => {
    const routes = INGRESS.flatMap((f) => f.routes.map((r) => `${r.method} ${r.path} → ${f.endpoint}`));
    expect(routes).toEqual([
      'POST /v1/chat/completions → chat',
      'POST /v1/completions → completions',
      'POST /v1/embeddings → embeddings',
      'GET /v1/models → models',
      'GET /v1/models/:id → models',
      'POST /v1/responses → responses',
      'POST /v1/messages → messages',
      'POST /v1/messages/count_tokens → count_tokens',
      'GET /v1/models → models',
      'GET /v1/models/:id → models',
    ]);
    // Anthropic's model list serves the same routes when the client sends anthropic-version.
    expect(INGRESS.filter((f) => f.selectedBy !== undefined).map((f) => [f.id, f.selectedBy])).toEqual([['anthropic-models', 'anthropic-version']]);
    expect(byId('models').routes[1]!.pathname).toBe('/v1/models');
  });

  it('translate a validated body into the canonical request: chat and completions stream on `stream: true`, embeddings never', () => {
    const headers = { 'x-a': '1' };
    expect(byId('chat').toRequest({ model: 'm', stream: true }, headers)).toEqual({ endpoint: 'chat', body: { model: 'm', stream: true }, stream: true, headers });
    expect(byId('completions').toRequest({ model: 'm' }, headers).stream).toBe(false);
    expect(byId('embeddings').toRequest({ model: 'm', input: 'x', stream: true }, headers).stream).toBe(false);
    expect(byId('models').hasBody).toBe(false);
    expect(byId('models').toRequest(undefined, headers)).toEqual({ endpoint: 'models', body: undefined, stream: false, headers });
  });

  it('validate the body with a 400 naming the field', () => {
    expect(() => byId('chat').parse({ model: 'm', messages: 'no' })).toThrow(GatewayError);
    const refusal = (() => {
      try {
        byId('chat').parse({ model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 9 });
      } catch (e) {
        return e as GatewayError;
      }
    })();
    expect(refusal?.status).toBe(400);
    expect(refusal?.param).toBe('temperature');
  });

  it("OpenAI's framing: the SSE frames, [DONE], the error envelope and the stream's error event", () => {
    const f = OPENAI_FRAMING;
    expect(f.chunk('{"a":1}')).toBe(sseData('{"a":1}'));
    expect(f.comment('hook_results {}')).toBe(sseComment('hook_results {}'));
    expect(f.end).toBe(SSE_DONE);
    expect(f.streamHeaders).toBe(SSE_HEADERS);
    expect(f.json({ type: 'json', status: 200, body: { a: 1 }, meta: { provider: 'p', target: 't', retries: 0 } })).toBe('{"a":1}');
    expect(f.json({ type: 'json', status: 200, body: undefined, raw: '{"b":2}', meta: { provider: 'p', target: 't', retries: 0 } })).toBe('{"b":2}');
    const body = f.errorBody(new GatewayError('invalid_json'), 'trace-1');
    expect(body).toMatchObject({ error: { code: 'invalid_json' } });
    expect(f.streamError(body, 3)).toBe(sseError(body));
  });
});

describe('the Responses API front door', () => {
  it('streams on `stream: true`; its frames name their events and no [DONE] ends them', () => {
    const f = byId('responses');
    expect(f.toRequest({ model: 'm', input: 'x', stream: true }, {})).toMatchObject({ endpoint: 'responses', stream: true });
    expect(f.framing.chunk('{"type":"response.created"}', 'response.created')).toBe('event: response.created\ndata: {"type":"response.created"}\n\n');
    expect(f.framing.chunk('{"type":"response.completed","response":{}}'), 'a replayed chunk is named by its type').toBe('event: response.completed\ndata: {"type":"response.completed","response":{}}\n\n');
    expect(f.framing.end).toBe('');
    expect(f.framing.streamError({ error: { message: 'x' } }, 7), 'the error event is typed and numbered next').toBe(
      'event: error\ndata: {"type":"error","sequence_number":7,"error":{"message":"x"}}\n\n',
    );
  });
});
