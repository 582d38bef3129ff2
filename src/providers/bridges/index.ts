import type { ChatBridge } from './bridge.js';
import { COUNT_TOKENS_ESTIMATE, type LocalAnswer } from './count-tokens.js';
import { MESSAGES_BRIDGE } from './messages.js';
import { RESPONSES_BRIDGE } from './responses.js';

export { answeredLocally, viaChat, type ChatBridge } from './bridge.js';
export type { LocalAnswer } from './count-tokens.js';

/**
 * The front doors a provider may not serve itself: each reached through chat completions, or (a
 * token count) answered by the gateway without calling the provider.
 */
export const BRIDGES: readonly (ChatBridge | LocalAnswer)[] = [
  RESPONSES_BRIDGE as ChatBridge,
  MESSAGES_BRIDGE as ChatBridge,
  COUNT_TOKENS_ESTIMATE,
];
