import { concatMap, concatWith, defer, type OperatorFunction } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import type { Provider, ProviderRequest, StreamChunk, Target } from '../providers/types.js';
import type { UpstreamHeaders, UpstreamMessage } from '../upstream/call.js';
import type { AnswerMeta, GatewayEvent } from '../upstream/events.js';

/** Upstream headers worth passing to the client. */
function passOn(headers: UpstreamHeaders): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const name in headers) {
    if (name === 'x-request-id' || name.startsWith('x-ratelimit-')) {
      const v = headers[name];
      if (v !== undefined) (out ??= {})[name] = Array.isArray(v) ? v.join(', ') : v;
    }
  }
  return out;
}

export interface DecodeUpstreamOptions {
  provider: Provider;
  /** The request as this target sent it. */
  request: ProviderRequest;
  /** Who answered: carried on the JSON answer and on `stream-start`. */
  meta: AnswerMeta;
  target?: Target;
}

/**
 * Provider wire messages → gateway events, through the provider's pure functions. For a stream,
 * `stream-start` is emitted with the first chunk that has content, never before.
 */
export function decodeUpstream(o: DecodeUpstreamOptions): OperatorFunction<UpstreamMessage, GatewayEvent> {
  const { provider, request: req, meta, target } = o;
  return (source) =>
    defer(() => {
      let state = req.stream ? provider.streamStart(req, target) : undefined;
      let started = false;
      let ended = false;
      /** A step's chunks as events, `stream-start` before the first with content. */
      const events = (chunks: readonly StreamChunk[], headers: UpstreamHeaders | undefined): GatewayEvent[] => {
        const out: GatewayEvent[] = [];
        for (const c of chunks) {
          if (!started && c.data !== '') {
            started = true;
            const upstreamHeaders = headers && passOn(headers);
            out.push({ type: 'stream-start', meta: upstreamHeaders ? { ...meta, upstreamHeaders } : meta });
          }
          out.push(
            c.event !== undefined
              ? { type: 'chunk', data: c.data, usage: c.usage, event: c.event }
              : c.usage
                ? { type: 'chunk', data: c.data, usage: c.usage }
                : { type: 'chunk', data: c.data },
          );
        }
        return out;
      };
      const decoded = (m: UpstreamMessage): GatewayEvent[] => {
        if (m.type === 'body') {
          if (req.stream) throw new GatewayError('upstream_invalid_response', 'The provider answered a stream request without a stream.');
          const r = provider.fromJson(req, m.text, target);
          const upstreamHeaders = passOn(m.headers);
          return [{ type: 'json', status: m.status, body: r.body, raw: r.raw, meta: upstreamHeaders ? { ...meta, upstreamHeaders } : meta, usage: r.usage }];
        }
        if (ended) return [];
        const step = provider.fromStreamEvent(state, m.event);
        state = step.state;
        if (step.done) ended = true;
        return events(step.chunks, m.headers);
      };
      return source.pipe(
        concatMap(decoded),
        concatWith(defer(() => (req.stream ? events(provider.streamEnd(state), undefined) : []))),
      );
    });
}
