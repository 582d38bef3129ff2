import { providerHeaders, type Scenario } from '../scenario.js';

/**
 * The plain request as a Responses API request, to an OpenAI-shaped host without /responses: the
 * gateway translates it into chat completions and the answer back into a response object.
 */
export const responses: Scenario = {
  id: 'responses',
  title: 'The plain request sent to POST /v1/responses and routed to a chat-only OpenAI-compatible host: translated to chat completions and back.',
  request: (up) => ({
    path: '/v1/responses',
    headers: providerHeaders(`${up}/v1`, 'openai-compatible'),
    body: '{"model":"gpt-4o-mini","input":"hello"}',
  }),
  check: (a) => (a.body.includes('"object":"response"') && a.body.includes('"output_text"') ? undefined : 'not a response object'),
};
