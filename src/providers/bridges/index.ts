import type { ChatBridge } from './bridge.js';
import { RESPONSES_BRIDGE } from './responses.js';

export { viaChat, type ChatBridge } from './bridge.js';

/** The front doors a provider may not serve itself, each reached through chat completions. */
export const BRIDGES: readonly ChatBridge[] = [
  RESPONSES_BRIDGE as ChatBridge,
];
