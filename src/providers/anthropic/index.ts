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

export interface AnthropicOptions {
  /** The clock for `created` (Anthropic's answers carry no timestamp); default: the real one. */
  nowSeconds?: () => number;
}

const realSeconds = (): number => Math.floor(Date.now() / 1000);

/** Anthropic's Messages API behind the OpenAI chat wire. */
export function anthropic(opts: AnthropicOptions = {}): Provider<AnthropicStreamState> {
  const now = opts.nowSeconds ?? realSeconds;
  return {
    descriptor: ANTHROPIC,
    toProvider: (req, target, baseUrl) => toAnthropic(ANTHROPIC, req, target, baseUrl),
    fromJson: (req, text) => fromAnthropicJson(req, text, now),
    fromError: fromAnthropicError,
    streamStart: (req) => anthropicStreamStart(req, now),
    fromStreamEvent: fromAnthropicStreamEvent,
    streamEnd: anthropicStreamEnd,
  };
}
