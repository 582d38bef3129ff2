import { checkStream, providerHeaders, type Scenario } from '../scenario.js';

/** The streams request to Bedrock: SigV4-signed, an AWS event-stream decoded and translated. */
export const streamsBedrock: Scenario = {
  id: 'streams-bedrock',
  title: 'The streams request routed to Bedrock: SigV4-signed, a ConverseStream of 20 event-stream frames translated into chat chunks.',
  request: (up) => ({
    headers: providerHeaders(`${up}/s/20/0`, 'bedrock', {
      'x-gateway-cloud-b-access-key-id': 'AKIDBENCHEXAMPLE',
      'x-gateway-cloud-b-secret-access-key': 'bench-secret-access-key',
      'x-gateway-cloud-b-region': 'us-east-1',
    }),
    body: '{"model":"anthropic.claude-3-5-sonnet-20240620-v1:0","stream":true,"messages":[{"role":"user","content":"hello"}]}',
  }),
  check: (a) => checkStream(a, 20),
};
