import type { Endpoint } from '../../providers/types.js';

/** The proxied endpoints: method, path, and the endpoint kind the pipeline serves. Data, not code. */
export const PROXY_ROUTES: readonly { method: 'GET' | 'POST'; path: string; endpoint: Endpoint }[] = [
  { method: 'POST', path: '/v1/chat/completions', endpoint: 'chat' },
  { method: 'POST', path: '/v1/completions', endpoint: 'completions' },
  { method: 'POST', path: '/v1/embeddings', endpoint: 'embeddings' },
  { method: 'GET', path: '/v1/models', endpoint: 'models' },
];
