import { openAIBodyFormat } from './openai.js';

/** OpenAI's chat completions: POST /v1/chat/completions, JSON or SSE. */
export const CHAT_COMPLETIONS = openAIBodyFormat('chat', [{ method: 'POST', path: '/v1/chat/completions' }], true);
