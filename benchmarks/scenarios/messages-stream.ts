import { providerHeaders, type Scenario } from '../scenario.js';

/** Anthropic's Messages stream passed through to a Messages client: each event as received. */
export const messagesStream: Scenario = {
  id: 'messages-stream',
  title: 'A streamed /v1/messages request to Anthropic: a Messages SSE stream of 20 events passed through as it is.',
  request: (up) => ({
    path: '/v1/messages',
    headers: providerHeaders(`${up}/s/20/0/v1`, 'anthropic', { 'anthropic-version': '2023-06-01' }),
    body: '{"model":"claude-bench","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hello"}]}',
  }),
  check: (a) => {
    const deltas = a.body.split('\n').filter((l) => l === 'event: content_block_delta').length;
    if (a.status !== 200 || deltas !== 18 || !a.body.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')) {
      return `want a 200 Messages stream of 18 text deltas ending in message_stop, got ${a.status} with ${deltas}: ${a.body.slice(0, 300)}`;
    }
    return undefined;
  },
};
