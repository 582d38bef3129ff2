/**
 * `POST /v1/messages/count_tokens` for a provider that has no count endpoint: the gateway answers
 * with an estimate, and the provider is not called. The rule (docs/messages-api.md, and
 * docs/decisions/0022-count-tokens-estimated-by-the-gateway.md): the request is translated as a
 * Messages request to that provider would be (the same refusals), and its chat request counted with
 * OpenAI's o200k_base encoding: each text, tool call and tool definition as its tokens, 3 tokens per
 * message and 3 for the answer's start, each image by Anthropic's rule (width × height / 750, at
 * most 1,600; 1,600 when its size is unknown).
 */
import { imageSize } from '../../pricing/image-size.js';
import type { Endpoint, JsonResult, ProviderRequest } from '../types.js';
import { toChatBody } from './messages-request.js';

type Json = Record<string, unknown>;
type Count = (text: string) => number;

/** Tokens per chat message for its role and framing, and for the start of the answer (OpenAI's chat format). */
export const MESSAGE_TOKENS = 3;
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

function contentTokens(content: unknown, count: Count): number {
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
export function chatPromptTokens(chat: Json, count: Count): number {
  let n = MESSAGE_TOKENS;
  for (const m of (chat.messages as Json[] | undefined) ?? []) {
    n += MESSAGE_TOKENS + contentTokens(m.content, count);
    for (const c of (m.tool_calls as Json[] | undefined) ?? []) {
      const fn = (c.function ?? {}) as Json;
      n += count(String(fn.name ?? '')) + count(String(fn.arguments ?? ''));
    }
  }
  for (const t of (chat.tools as Json[] | undefined) ?? []) n += count(JSON.stringify(t.function ?? t));
  return n;
}

let encoder: Promise<Count> | undefined;

/** OpenAI's o200k_base token count, loaded on first use (its tables take a while to load); special tokens counted as text. */
function o200k(): Promise<Count> {
  encoder ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => {
    const options = { disallowedSpecial: new Set<string>() };
    return (text: string) => (text === '' ? 0 : m.countTokens(text, options));
  });
  return encoder;
}

/** The gateway's answer to a token count for a provider without a count endpoint. */
export const COUNT_TOKENS_ESTIMATE: LocalAnswer = {
  endpoint: 'count_tokens',
  async answer(req) {
    const chat = toChatBody(req.body ?? {}, false);
    return { body: { input_tokens: chatPromptTokens(chat, await o200k()) } };
  },
};
