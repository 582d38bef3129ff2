/**
 * Shapes of the OpenAI wire that the gateway speaks to clients, shared by every layer: the proxied
 * endpoints and the token usage an answer reports.
 */
export type Endpoint = 'chat' | 'completions' | 'embeddings' | 'models' | 'responses' | 'messages' | 'count_tokens';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens served from or written to the provider's prompt cache (both included in prompt_tokens). */
  prompt_tokens_details?: {
    /** Read from the cache (OpenAI cached_tokens, Anthropic cache_read_input_tokens, ...). */
    cached_tokens?: number;
    /** Written to the cache (Anthropic cache_creation_input_tokens, Cloud B cacheWriteInputTokens). */
    cache_write_tokens?: number;
  };
}

