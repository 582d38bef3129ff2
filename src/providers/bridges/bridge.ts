import { memoByObject } from '../../util/memo.js';
import type { Endpoint, JsonResult, Provider, ProviderRequest, StreamChunk, StreamEvent, StreamStep, Target, Usage } from '../types.js';

/**
 * How a front door reaches a provider that does not serve its format: its request becomes a chat
 * completions request, which the provider's own translation takes from there, and the chat answer
 * becomes the front door's answer again. Pure functions, like a provider's; a provider that serves
 * the format itself (its descriptor has a path for the endpoint) is called without one.
 */
export interface ChatBridge<S = unknown> {
  /** The front door's endpoint. */
  readonly endpoint: Endpoint;
  /** Its request → a chat completions request (`endpoint: 'chat'`). Throws a GatewayError (400) for what chat cannot carry. */
  toChat(req: ProviderRequest): ProviderRequest;
  /** A chat completion, as the provider's translation returned it → the front door's JSON answer. */
  fromChatJson(req: ProviderRequest, chat: JsonResult): JsonResult;
  /** The state of one stream's translation. */
  streamStart(req: ProviderRequest): S;
  /** One chat completion chunk (its JSON text, its usage) → the front door's chunks. */
  fromChatChunk(state: S, chunk: StreamChunk): StreamStep<S>;
  /** The chat stream ended cleanly → the front door's closing chunks. */
  streamEnd(state: S): StreamChunk[];
}

/** What a bridge's stream state keeps of the chat stream's usage: the provider's figures and the chunk's own body. */
export interface ChatUsageState {
  usage?: Usage;
  usageBody?: unknown;
}

/**
 * One chat chunk read for a bridge: its usage noted on `state`, its JSON parsed (undefined for the
 * empty chunk a provider's translation sends to carry usage only). Parsed once, here.
 */
export function readChatChunk(state: ChatUsageState, chunk: StreamChunk): Record<string, unknown> | undefined {
  if (chunk.usage) state.usage = chunk.usage;
  if (chunk.data === '') return undefined;
  const parsed = JSON.parse(chunk.data) as Record<string, unknown>;
  if (parsed.usage) state.usageBody = parsed.usage;
  return parsed;
}

interface BridgedState {
  inner: unknown;
  outer: unknown;
}

/**
 * `inner` reached through `bridge`: a provider whose requests of the bridge's endpoint go out as chat
 * completions and whose answers come back in the front door's format. Everything else is `inner`'s.
 */
export function viaChat(inner: Provider, bridge: ChatBridge): Provider<BridgedState> {
  // The chat request of a request: computed once, whichever of the functions asks first.
  const chatOf = memoByObject((req: ProviderRequest) => bridge.toChat(req));
  const outerChunks = (outer: unknown, chunks: readonly StreamChunk[]): { outer: unknown; chunks: StreamChunk[] } => {
    const out: StreamChunk[] = [];
    for (const c of chunks) {
      const step = bridge.fromChatChunk(outer, c);
      outer = step.state;
      out.push(...step.chunks);
    }
    return { outer, chunks: out };
  };
  return {
    descriptor: inner.descriptor,
    toProvider: (req: ProviderRequest, target: Target, baseUrl: string) => inner.toProvider(chatOf(req), target, baseUrl),
    prepare: inner.prepare?.bind(inner),
    fromJson: (req: ProviderRequest, text: string, target?: Target) => bridge.fromChatJson(req, inner.fromJson(chatOf(req), text, target)),
    fromError: inner.fromError.bind(inner),
    streamStart: (req: ProviderRequest, target?: Target) => ({ inner: inner.streamStart(chatOf(req), target), outer: bridge.streamStart(req) }),
    fromStreamEvent(state: BridgedState, event: StreamEvent): StreamStep<BridgedState> {
      const step = inner.fromStreamEvent(state.inner, event);
      const { outer, chunks } = outerChunks(state.outer, step.chunks);
      return { state: { inner: step.state, outer }, chunks, done: step.done };
    },
    streamEnd(state: BridgedState): StreamChunk[] {
      const { outer, chunks } = outerChunks(state.outer, inner.streamEnd(state.inner));
      return [...chunks, ...bridge.streamEnd(outer)];
    },
  };
}

/**
 * `inner` for an endpoint the gateway answers itself (`local`): the provider is never called for
 * it (callTarget sees `answer`); everything else is `inner`'s.
 */
export function answeredLocally(inner: Provider, local: { answer: NonNullable<Provider['answer']> }): Provider {
  return {
    descriptor: inner.descriptor,
    toProvider: inner.toProvider.bind(inner),
    fromJson: inner.fromJson.bind(inner),
    fromError: inner.fromError.bind(inner),
    streamStart: inner.streamStart.bind(inner),
    fromStreamEvent: inner.fromStreamEvent.bind(inner),
    streamEnd: inner.streamEnd.bind(inner),
    answer: local.answer,
  };
}
