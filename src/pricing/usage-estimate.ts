/**
 * What a request will use, estimated before it is sent: the usage-limit stage reserves this much on
 * every policy the request matches, and replaces it with the provider's reported usage afterwards.
 * A cheap estimate, no tokenizer: it runs only for requests that match a policy, and what it gets
 * wrong is corrected when the answer's usage is settled.
 *
 * Counting is by default, not by a list of billable fields: every field of the body (and of the
 * target's `override_params`, which the provider receives in their place) counts as its text, and
 * only the fields whose cost follows other rules are counted otherwise (messages, images, audio,
 * token ids, `prediction`). A field the estimate has never heard of is therefore counted, and a
 * client cannot move its text to a field that is sent but not counted.
 */
import { imageSize } from './image-size.js';
import type { Endpoint } from '../config/wire.js';
import { normalModelId } from './model-id.js';

/** Output tokens reserved for a chat request that sets neither `max_completion_tokens` nor `max_tokens`. */
export const DEFAULT_OUTPUT_TOKENS = 1024;
/** The legacy completions endpoint's own default `max_tokens` (OpenAI's). */
export const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;
/** Tokens counted per chat message for its role and framing. */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Tokens counted for a part whose size cannot be known from the request (a file sent by `file_id`). */
export const MEDIA_PART_TOKENS = 1000;
/**
 * 512 px tiles of an image of unknown size at high detail: the most the scaling rule allows (fit in
 * 2048 × 2048, then the short side at most 768: 2048 × 768 is 4 × 2 tiles).
 */
export const MAX_IMAGE_TILES = 8;
/**
 * Inline audio: bytes per token. Audio is billed by its length (about 10 tokens a second of input);
 * 16 kbit/s is 2,000 bytes a second, lower than clients send speech, so this over-reserves.
 */
export const AUDIO_BYTES_PER_TOKEN = 200;

export interface TokenEstimate {
  input: number;
  output: number;
}

/**
 * Tokens of a text: its UTF-8 bytes / 4 (Buffer.byteLength is native: no loop over the characters).
 * Measured against OpenAI's o200k tokenizer: English prose 0.98×, Markdown 0.91×, TypeScript 1.02×,
 * German 1.15×, Chinese 1.13×, Japanese 1.04×, Russian 2.2× (over-reserves), JSON full of digits
 * and hashes 0.62× (under-reserves), a one-line chat turn 1.3×.
 */
export function textTokens(s: string): number {
  return s.length === 0 ? 0 : Math.ceil(Buffer.byteLength(s, 'utf8') / 4);
}

/**
 * Any value as text: a string as it is, an object or array as its JSON. A number or a boolean is a
 * setting (a temperature, a limit), never prompt text: 0.
 */
function fieldTokens(v: unknown): number {
  if (typeof v === 'string') return textTokens(v);
  if (v === null || typeof v !== 'object') return 0;
  return textTokens(JSON.stringify(v));
}

/**
 * An image's tokens by OpenAI's rule for tiled vision models: `base` at low detail; at high (and
 * auto, which may pick high) `base` + `tile` per 512 px tile of the image once scaled to fit in
 * 2048 × 2048 and then to a short side of at most 768. Patch models count 32 px patches (at most
 * 1,536) times a multiplier, whatever the detail.
 */
type ImageRule = { kind: 'tiles'; base: number; tile: number } | { kind: 'patches'; multiplier: number };

const TILES: ImageRule = { kind: 'tiles', base: 85, tile: 170 };
const MAX_PATCHES = 1536;
/** Models whose image tokens differ from TILES, by normalised model id. */
const IMAGE_RULES: ReadonlyMap<string, ImageRule> = new Map<string, ImageRule>([
  // gpt-4o-mini bills images at a high token count to price them as gpt-4o does.
  ['gpt-4o-mini', { kind: 'tiles', base: 2833, tile: 5667 }],
  ['gpt-5', { kind: 'tiles', base: 70, tile: 140 }],
  ['gpt-4.1-mini', { kind: 'patches', multiplier: 1.62 }],
  ['gpt-4.1-nano', { kind: 'patches', multiplier: 2.46 }],
  ['gpt-5-mini', { kind: 'patches', multiplier: 1.62 }],
  ['gpt-5-nano', { kind: 'patches', multiplier: 2.46 }],
  ['o4-mini', { kind: 'patches', multiplier: 1.72 }],
]);

function imageRule(model: unknown): ImageRule {
  return (typeof model === 'string' && IMAGE_RULES.get(normalModelId(model))) || TILES;
}

/** 512 px tiles of a `width` × `height` image after OpenAI's scaling (never scaled up). */
export function imageTiles(width: number, height: number): number {
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const short = Math.min(1, 768 / Math.min(w, h));
  w *= short;
  h *= short;
  return Math.ceil(Math.floor(w) / 512) * Math.ceil(Math.floor(h) / 512);
}

function imageTokens(image: unknown, rule: ImageRule): number {
  const o = image && typeof image === 'object' ? (image as { url?: unknown; detail?: unknown }) : undefined;
  const url = typeof image === 'string' ? image : o?.url;
  const size = typeof url === 'string' ? imageSize(url) : undefined;
  if (rule.kind === 'patches') {
    const patches = size ? Math.ceil(size.width / 32) * Math.ceil(size.height / 32) : MAX_PATCHES;
    return Math.ceil(Math.min(MAX_PATCHES, patches) * rule.multiplier);
  }
  if (o?.detail === 'low') return rule.base;
  return rule.base + rule.tile * (size ? imageTiles(size.width, size.height) : MAX_IMAGE_TILES);
}

/** Base64 data → its decoded bytes (without the `=` padding). */
const base64Bytes = (s: string): number => Math.floor((s.length * 3) / 4) - (s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0);

/** A content part by its type: text and refusals as text, images and audio by their rules, files as their data. */
function partTokens(part: unknown, rule: ImageRule): number {
  if (!part || typeof part !== 'object') return fieldTokens(part);
  const p = part as Record<string, unknown>;
  switch (p.type) {
    case 'text':
      if (typeof p.text === 'string') return textTokens(p.text);
      break;
    case 'refusal':
      if (typeof p.refusal === 'string') return textTokens(p.refusal);
      break;
    case 'image_url':
      return imageTokens(p.image_url, rule);
    case 'input_audio': {
      const data = (p.input_audio as { data?: unknown } | null)?.data;
      if (typeof data === 'string') return Math.ceil(base64Bytes(data) / AUDIO_BYTES_PER_TOKEN);
      break;
    }
    case 'file': {
      // Counted as the text it could have been: moving text into a file does not make it cheaper.
      const file = p.file as { file_data?: unknown; file_id?: unknown } | null;
      if (typeof file?.file_data === 'string') return textTokens(file.file_data);
      if (file?.file_id !== undefined) return MEDIA_PART_TOKENS;
      break;
    }
  }
  return fieldTokens(part);
}

/** A Responses API content part → the chat part counted the same way (input_image by its URL, input_file by its data). */
function responsesPart(part: unknown): unknown {
  if (!part || typeof part !== 'object') return part;
  const p = part as Record<string, unknown>;
  if (p.type === 'input_text' || p.type === 'output_text') return { type: 'text', text: p.text };
  if (p.type === 'input_image') return { type: 'image_url', image_url: { url: p.image_url, detail: p.detail } };
  if (p.type === 'input_file') return { type: 'file', file: p };
  return part;
}

/**
 * Responses API input: a string, or items counted as chat messages, their `type` framing as a role is
 * (a function call or its output counted as its fields' text).
 */
function responsesInputTokens(input: unknown, rule: ImageRule): number {
  if (!Array.isArray(input)) return fieldTokens(input);
  const items = input.map((it) => {
    if (!it || typeof it !== 'object') return it;
    const { type: _type, ...item } = it as Record<string, unknown>;
    if (Array.isArray(item.content)) item.content = item.content.map(responsesPart);
    return item;
  });
  return messagesTokens(items, rule);
}

function contentTokens(c: unknown, rule: ImageRule): number {
  if (!Array.isArray(c)) return fieldTokens(c);
  let n = 0;
  for (const part of c) n += typeof part === 'string' ? textTokens(part) : partTokens(part, rule);
  return n;
}

/** Each message: its framing, its content by part, and every other field (name, refusal, tool calls, ...) as text. */
function messagesTokens(messages: unknown, rule: ImageRule): number {
  if (!Array.isArray(messages)) return fieldTokens(messages);
  let n = 0;
  for (const m of messages) {
    if (!m || typeof m !== 'object') {
      n += fieldTokens(m);
      continue;
    }
    n += MESSAGE_OVERHEAD_TOKENS;
    const msg = m as Record<string, unknown>;
    for (const k in msg) {
      if (k === 'role') continue;
      n += k === 'content' ? contentTokens(msg[k], rule) : fieldTokens(msg[k]);
    }
  }
  return n;
}

/** A prompt or an embedding input: a string, strings, token ids (counted exactly) or arrays of them. */
function inputTokens(v: unknown): number {
  if (typeof v === 'string') return textTokens(v);
  if (!Array.isArray(v)) return fieldTokens(v);
  let n = 0;
  for (const x of v) {
    if (typeof x === 'string') n += textTokens(x);
    else if (typeof x === 'number') n += 1;
    else if (Array.isArray(x)) n += x.length;
    else n += fieldTokens(x);
  }
  return n;
}

function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

/** Calls `each` with every field the provider receives: the body's, with the target's override_params in their place. */
function eachField(body: Record<string, unknown>, override: Record<string, unknown> | undefined, each: (k: string, v: unknown) => void): void {
  for (const k in body) if (!override || !(k in override)) each(k, body[k]);
  if (override) for (const k in override) each(k, override[k]);
}

/**
 * The estimate of one request. `override` is the answering target's `override_params` when known
 * (its fields win over the body's, as they do on the wire).
 *
 * - chat: each message as 4 tokens plus its content (text and refusal parts as `textTokens`, images
 *   by `imageTokens`, inline audio by its length, a file's data as text, a file id 1,000) plus its
 *   other fields as text (name, refusal, tool calls, function call, ...); every other field of the
 *   body but `model` as text (tools, functions, response_format, tool_choice, ...; numbers and
 *   booleans are settings, 0). Output: `max_completion_tokens`,
 *   else `max_tokens`, else 1,024, times `n`; plus the `prediction` (rejected predicted tokens are
 *   billed as output).
 * - completions: the prompt (token ids counted exactly) and every other field as text (`suffix`);
 *   output `max_tokens` (default 16) times the larger of `n` and `best_of`.
 * - embeddings: the input; no output.
 * - responses: the input as chat messages (its parts counted as chat's: input_text as text,
 *   input_image as an image, input_file as a file), or a string input as text; every other field
 *   but `model` as text (instructions, tools, ...). Output: `max_output_tokens`, else 1,024.
 */
export function estimateTokens(endpoint: Endpoint, body: Record<string, unknown> | undefined, override?: Record<string, unknown>): TokenEstimate {
  if (!body) return { input: 0, output: 0 };
  const get = (k: string): unknown => (override && k in override ? override[k] : body[k]);
  switch (endpoint) {
    case 'chat': {
      const rule = imageRule(get('model'));
      let input = 0;
      let predicted = 0;
      eachField(body, override, (k, v) => {
        if (k === 'messages') input += messagesTokens(v, rule);
        else if (k === 'prediction') predicted += fieldTokens(v);
        else if (k !== 'model') input += fieldTokens(v);
      });
      const max = count(get('max_completion_tokens')) ?? count(get('max_tokens')) ?? DEFAULT_OUTPUT_TOKENS;
      return { input, output: max * (count(get('n')) ?? 1) + predicted };
    }
    case 'completions': {
      let input = 0;
      eachField(body, override, (k, v) => {
        if (k === 'prompt') input += inputTokens(v);
        else if (k !== 'model') input += fieldTokens(v);
      });
      const max = count(get('max_tokens')) ?? COMPLETIONS_DEFAULT_MAX_TOKENS;
      const choices = Math.max(count(get('n')) ?? 1, count(get('best_of')) ?? 1);
      return { input, output: max * choices };
    }
    case 'embeddings':
      return { input: inputTokens(get('input')), output: 0 };
    case 'responses': {
      const rule = imageRule(get('model'));
      let input = 0;
      eachField(body, override, (k, v) => {
        if (k === 'input') input += responsesInputTokens(v, rule);
        else if (k !== 'model') input += fieldTokens(v);
      });
      return { input, output: count(get('max_output_tokens')) ?? DEFAULT_OUTPUT_TOKENS };
    }
    default:
      return { input: 0, output: 0 };
  }
}
