import { CHAT_BODY, providerHeaders, type Scenario } from '../scenario.js';

/** The plain request: what every request pays when it declares nothing. */
export const throughput: Scenario = {
  id: 'throughput',
  title: 'A chat request routed by headers to an OpenAI-shaped upstream: no config, hooks, limits, prompts or cache.',
  request: (up) => ({ headers: providerHeaders(`${up}/v1`), body: CHAT_BODY }),
  check: (a) => (a.body.includes('"chat.completion"') ? undefined : 'not a chat.completion'),
};
