import type { Provider } from '../types.js';
import { ANTHROPIC } from './descriptor.js';
import { toAnthropic } from './to-provider.js';
import {
  anthropicStreamEnd,
  anthropicStreamStart,
  fromAnthropicError,
  fromAnthropicJson,
  fromAnthropicStreamEvent,
  type AnthropicStreamState,
} from './from-provider.js';
import { fromNativeJson, fromNativeStreamEvent, nativeStreamEnd, nativeStreamStart, type NativeStreamState } from './native.js';

export interface AnthropicOptions {
  /** The clock for `created` (Anthropic's answers carry no timestamp); default: the real one. */
  nowSeconds?: () => number;
}

const realSeconds = (): number => Math.floor(Date.now() / 1000);

type State = AnthropicStreamState | NativeStreamState;
const isNative = (s: State): s is NativeStreamState => (s as NativeStreamState).native === true;

/**
 * Anthropic's Messages API behind the OpenAI chat wire, and served as it is to the Messages front
 * door (native.ts).
 */
export function anthropic(opts: AnthropicOptions = {}): Provider<State> {
  const now = opts.nowSeconds ?? realSeconds;
  return {
    descriptor: ANTHROPIC,
    toProvider: (req, target, baseUrl) => toAnthropic(ANTHROPIC, req, target, baseUrl),
    fromJson: (req, text) => (req.endpoint === 'messages' || req.endpoint === 'count_tokens' ? fromNativeJson(text) : fromAnthropicJson(req, text, now)),
    fromError: fromAnthropicError,
    streamStart: (req) => (req.endpoint === 'messages' ? nativeStreamStart() : anthropicStreamStart(req, now)),
    fromStreamEvent: (s, ev) => (isNative(s) ? fromNativeStreamEvent(s, ev) : fromAnthropicStreamEvent(s, ev)),
    streamEnd: (s) => (isNative(s) ? nativeStreamEnd(s) : anthropicStreamEnd(s)),
  };
}
