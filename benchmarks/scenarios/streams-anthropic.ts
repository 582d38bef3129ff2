import { checkStream, providerHeaders, type Scenario } from '../scenario.js';

/** The streams request to Anthropic's Messages API: each event translated into a chat chunk. */
export const streamsAnthropic: Scenario = {
  id: 'streams-anthropic',
  title: 'The streams request routed to Anthropic: a Messages SSE stream of 20 events translated into chat chunks.',
  request: (up) => ({
    headers: providerHeaders(`${up}/s/20/0/v1`, 'anthropic'),
    body: '{"model":"claude-bench","stream":true,"messages":[{"role":"user","content":"hello"}]}',
  }),
  check: (a) => checkStream(a, 20),
};
