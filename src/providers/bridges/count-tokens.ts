/**
 * `POST /v1/messages/count_tokens` for a provider that has no count endpoint: the gateway answers
 * with an estimate, and the provider is not called. The rule (docs/messages-api.md, and
 * docs/decisions/0029-count-tokens-estimated-by-the-gateway.md): the request is translated as a
 * Messages request to that provider would be (the same refusals), and its chat request counted:
 * each text, tool call and tool definition by OpenAI's o200k_base tokenizer (bounded as every count
 * of the gateway's is: src/pricing/input-tokens.ts), 4 tokens per message for its framing, each image
 * by Anthropic's rule (width × height / 750, at most 1,600; 1,600 when its size is unknown).
 */
import { imageSize } from '../../pricing/image-size.js';
import { tokenizerCounter, type Counter } from '../../pricing/input-tokens.js';
import { MESSAGE_OVERHEAD_TOKENS } from '../../pricing/usage-estimate.js';
import type { Endpoint, JsonResult, ProviderRequest } from '../types.js';
import { toChatBody } from './messages-request.js';

type Json = Record<string, unknown>;
/** The most an image costs by Anthropic's rule (larger ones are scaled down); an image of unknown size counts this much. */
export const MAX_IMAGE_TOKENS = 1600;
const MAX_IMAGE_EDGE = 1568;

/** A front door's endpoint the gateway answers itself for a provider that does not serve it: no upstream call. */
export interface LocalAnswer {
  readonly endpoint: Endpoint;
  answer(req: ProviderRequest): Promise<JsonResult>;
}

/** An image's tokens by Anthropic's rule: scaled to a long edge of at most 1,568 px, then width × height / 750, at most 1,600. */
export function imageTokens(url: unknown): number {
  const size = typeof url === 'string' ? imageSize(url) : undefined;
  if (!size) return MAX_IMAGE_TOKENS;
  const scale = Math.min(1, MAX_IMAGE_EDGE / Math.max(size.width, size.height));
  return Math.min(MAX_IMAGE_TOKENS, Math.ceil((size.width * scale * (size.height * scale)) / 750));
}

function contentTokens(content: unknown, count: Counter): number {
  if (typeof content === 'string') return count(content);
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const p of content as Json[]) {
    if (p.type === 'text') n += count(String(p.text ?? ''));
    else if (p.type === 'image_url') n += imageTokens((p.image_url as Json | undefined)?.url);
  }
  return n;
}

/** The estimate of a chat body's prompt: its messages, their tool calls and its tools. */
export function chatPromptTokens(chat: Json, count: Counter): number {
  let n = 0;
  for (const m of (chat.messages as Json[] | undefined) ?? []) {
    n += MESSAGE_OVERHEAD_TOKENS + contentTokens(m.content, count);
    for (const c of (m.tool_calls as Json[] | undefined) ?? []) {
      const fn = (c.function ?? {}) as Json;
      n += count(String(fn.name ?? '')) + count(String(fn.arguments ?? ''));
    }
  }
  for (const t of (chat.tools as Json[] | undefined) ?? []) n += count(JSON.stringify(t.function ?? t));
  return n;
}

/** The gateway's answer to a token count for a provider without a count endpoint. */
export const COUNT_TOKENS_ESTIMATE: LocalAnswer = {
  endpoint: 'count_tokens',
  async answer(req) {
    const chat = toChatBody(req.body ?? {}, false);
    return { body: { input_tokens: chatPromptTokens(chat, tokenizerCounter('o200k_base')) } };
  },
};
