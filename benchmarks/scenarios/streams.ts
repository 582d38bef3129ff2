import { STREAM_BODY, checkStream, providerHeaders, type Scenario } from '../scenario.js';

/** An OpenAI stream passed through: CPU per stream of 20 chunks sent back to back. */
export const streams: Scenario = {
  id: 'streams',
  title: 'A streamed chat request to an OpenAI-shaped upstream: 20 chunks back to back, passed through.',
  request: (up) => ({ headers: providerHeaders(`${up}/s/20/0/v1`), body: STREAM_BODY }),
  check: (a) => checkStream(a, 20),
};
