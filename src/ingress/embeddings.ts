import { openAIBodyFormat } from './openai.js';

/** OpenAI's embeddings: POST /v1/embeddings, JSON only (a `stream` field is not a stream). */
export const EMBEDDINGS = openAIBodyFormat('embeddings', [{ method: 'POST', path: '/v1/embeddings' }], false);
