import { openAIBodyFormat } from './openai.js';

/** OpenAI's legacy completions: POST /v1/completions, JSON or SSE. */
export const COMPLETIONS = openAIBodyFormat('completions', [{ method: 'POST', path: '/v1/completions' }], true);
