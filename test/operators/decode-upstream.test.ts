import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { decodeUpstream } from '../../src/operators/decode-upstream.js';
import type { AnswerMeta, GatewayEvent } from '../../src/upstream/events.js';
import { OPENAI_COMPATIBLE } from '../../src/providers/openai-compatible/descriptors.js';
import { openAICompatible } from '../../src/providers/openai-compatible/index.js';
import type { Provider, ProviderRequest } from '../../src/providers/types.js';
import type { UpstreamHeaders, UpstreamMessage } from '../../src/upstream/call.js';
import { newScheduler } from '../helpers/marbles.js';

const openai = openAICompatible(OPENAI_COMPATIBLE.find((d) => d.id === 'openai')!) as Provider;
const meta: AnswerMeta = { provider: 'openai', target: 'config.targets[0]', retries: 0 };

const chatBody = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const streamReq: ProviderRequest = { endpoint: 'chat', body: { ...chatBody, stream: true }, stream: true, headers: {} };
const jsonReq: ProviderRequest = { endpoint: 'chat', body: chatBody, stream: false, headers: {} };

const sseHeaders: UpstreamHeaders = {
  'content-type': 'text/event-stream',
  'x-request-id': 'req_fake',
  'x-ratelimit-remaining-requests': '99',
  'set-cookie': ['should-not-pass'],
  'openai-processing-ms': '12',
};
const passedOn = { 'x-request-id': 'req_fake', 'x-ratelimit-remaining-requests': '99' };

const ev = (data: string, event?: string): UpstreamMessage => ({
  type: 'event',
  status: 200,
  headers: sseHeaders,
  event: event === undefined ? { data } : { event, data },
});

const contentChunk = (content: string) => JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] });
const usage = { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 };
const usageOnly = JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [], usage });

const upstream = {
  r: ev(contentChunk('')), // role chunk: content "" but the chunk itself is not empty
  a: ev(contentChunk('Hel')),
  b: ev(contentChunk('lo')),
  u: ev(usageOnly),
  d: ev('[DONE]'),
  x: ev('{"error":{"message":"overloaded","code":"server_busy"}}'),
  j: { type: 'body', status: 200, headers: { 'content-type': 'application/json', 'x-request-id': 'req_fake' }, text: '{"id":"chatcmpl-1","usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}' },
} satisfies Record<string, UpstreamMessage>;

const out: Record<string, GatewayEvent> = {
  s: { type: 'stream-start', meta: { ...meta, upstreamHeaders: passedOn } },
  r: { type: 'chunk', data: contentChunk('') },
  a: { type: 'chunk', data: contentChunk('Hel') },
  b: { type: 'chunk', data: contentChunk('lo') },
  h: { type: 'chunk', data: '', usage }, // the hidden usage chunk: numbers only
  J: {
    type: 'json',
    status: 200,
    body: { id: 'chatcmpl-1', usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
    raw: upstream.j.text,
    meta: { ...meta, upstreamHeaders: { 'x-request-id': 'req_fake' } },
    usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
  },
};

const gwError = (code: string) => expect.objectContaining({ name: 'GatewayError', code });

describe('decodeUpstream', () => {
  it('emits stream-start together with the first chunk, then chunks, and completes after [DONE]', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      // A group `(..)` takes as many frames as it has characters: the time progressions line up.
      const source = cold<UpstreamMessage>('2ms r 9ms a 9ms b 9ms d 9ms |', upstream);
      expectObservable(source.pipe(decodeUpstream({ provider: openai, request: streamReq, meta }))).toBe('2ms (sr) 6ms a 9ms b 19ms |', out);
      expectSubscriptions(source.subscriptions).toBe('^ 41ms !');
    });
  });

  it('sends stream-start only with the first chunk that has content, not with an empty (hidden usage) chunk', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      // A usage-only chunk (hidden: the client asked for no usage) comes before any content.
      const source = cold<UpstreamMessage>('2ms u 9ms a 9ms d |', upstream);
      expectObservable(source.pipe(decodeUpstream({ provider: openai, request: streamReq, meta }))).toBe('2ms h 9ms (sa) 7ms |', out);
    });
  });

  it('sends stream-start once', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold<UpstreamMessage>('(ab)-a-(bd)|', upstream);
      expectObservable(source.pipe(decodeUpstream({ provider: openai, request: streamReq, meta }))).toBe('(sab)a-b---|', out);
    });
  });

  it('emits no stream-start for a stream that ends before any content', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<UpstreamMessage>('--d--|', upstream).pipe(decodeUpstream({ provider: openai, request: streamReq, meta }))).toBe('-----|', out);
    });
  });

  it('ignores events after [DONE]', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold<UpstreamMessage>('-a-d-b-x-|', upstream);
      expectObservable(source.pipe(decodeUpstream({ provider: openai, request: streamReq, meta }))).toBe('-(sa)----|', out);
    });
  });

  it('errors with stream_interrupted when the upstream ends without [DONE] (streamEnd errors propagate)', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold<UpstreamMessage>('1ms a 9ms b 9ms |', upstream);
      expectObservable(source.pipe(decodeUpstream({ provider: openai, request: streamReq, meta }))).toBe('1ms (sa) 6ms b 9ms #', out, gwError('stream_interrupted'));
    });
  });

  it('errors on a mid-stream error event and unsubscribes the upstream', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<UpstreamMessage>('1ms a 9ms x 9ms b 9ms d|', upstream);
      expectObservable(source.pipe(decodeUpstream({ provider: openai, request: streamReq, meta }))).toBe(
        '1ms (sa) 6ms #',
        out,
        expect.objectContaining({ code: 'upstream_error', message: 'overloaded', upstreamCode: 'server_busy', status: 502 }),
      );
      expectSubscriptions(source.subscriptions).toBe('^ 10ms !');
    });
  });

  it('passes an upstream error through', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const cut = new GatewayError('stream_interrupted');
      const source = cold<UpstreamMessage>('1ms a 9ms #', upstream, cut);
      expectObservable(source.pipe(decodeUpstream({ provider: openai, request: streamReq, meta }))).toBe('1ms (sa) 6ms #', out, cut);
    });
  });

  it('maps a body to one json event with raw text, usage and passed-on headers', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold<UpstreamMessage>('---j|', upstream);
      expectObservable(source.pipe(decodeUpstream({ provider: openai, request: jsonReq, meta }))).toBe('---J|', out);
    });
  });

  it('keeps the meta as given when no header is worth passing on', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const plain: UpstreamMessage = { type: 'body', status: 201, headers: { 'content-type': 'application/json' }, text: '{"ok":true}' };
      expectObservable(cold<UpstreamMessage>('-p|', { p: plain }).pipe(decodeUpstream({ provider: openai, request: jsonReq, meta }))).toBe('-P|', {
        P: { type: 'json', status: 201, body: { ok: true }, raw: '{"ok":true}', meta, usage: undefined },
      });
    });
  });

  it('errors with upstream_invalid_response for a body that is not JSON', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const bad: UpstreamMessage = { type: 'body', status: 200, headers: {}, text: '<html>' };
      expectObservable(cold<UpstreamMessage>('-p|', { p: bad }).pipe(decodeUpstream({ provider: openai, request: jsonReq, meta }))).toBe(
        '-#',
        undefined,
        gwError('upstream_invalid_response'),
      );
    });
  });

  it('errors for a body on a stream request', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<UpstreamMessage>('--j|', upstream);
      expectObservable(source.pipe(decodeUpstream({ provider: openai, request: streamReq, meta }))).toBe(
        '--#',
        undefined,
        expect.objectContaining({ code: 'upstream_invalid_response', message: 'The provider answered a stream request without a stream.' }),
      );
      expectSubscriptions(source.subscriptions).toBe('^-!');
    });
  });

  it('starts a fresh stream state for each subscription', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const decoded = cold<UpstreamMessage>('1ms a 9ms d |', upstream).pipe(decodeUpstream({ provider: openai, request: streamReq, meta }));
      // Both subscribers see stream-start: `started` is per subscription.
      expectObservable(decoded).toBe('1ms (sa) 7ms |', out);
      expectObservable(decoded).toBe('1ms (sa) 7ms |', out);
    });
  });
});
