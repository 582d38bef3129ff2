/**
 * How many tokens of a model's context window a Responses API request's input takes, item by item:
 * the truncation rule's count (src/providers/context-fit.ts). Text is counted by a `Counter`: OpenAI's
 * own tokenizer for OpenAI models (`gpt-tokenizer`, o200k_base or cl100k_base by model), the
 * gateway's estimate for every other model (UTF-8 bytes / 4, rounded up: `textTokens`). What is not
 * text is counted by rules the same for every model: an image as OpenAI's tiles, a file as a fixed
 * amount, each item's framing as a fixed overhead.
 */
import { createRequire } from 'node:module';
import { imageSize } from './image-size.js';
import { normalModelId } from './model-id.js';
import { imageTiles, MAX_IMAGE_TILES, MESSAGE_OVERHEAD_TOKENS, textTokens } from './usage-estimate.js';

type Obj = Record<string, unknown>;

/** Tokens of one text. */
export type Counter = (text: string) => number;

export type Encoding = 'o200k_base' | 'cl100k_base';

/** An image: OpenAI's rule for tiled vision models, 85 tokens plus 170 per 512 px tile (85 at low detail). */
export const IMAGE_BASE_TOKENS = 85;
export const IMAGE_TILE_TOKENS = 170;
/**
 * A file (`input_file`): what a provider takes from it (extracted text, page images) is not known
 * before it reads the file, so each counts this much. The count is meant to refuse only what cannot
 * fit; a file larger in tokens is left to the provider's own limit.
 */
export const FILE_TOKENS = 1000;
/**
 * Characters of one request the tokenizer reads at most (newest items first); text past it is counted
 * by the estimate. Byte-pair encoding of text without the usual word breaks (random base64, hashes)
 * not seen before runs at about 130,000 characters a second (prose a hundred times faster), so this
 * bounds the tokenizer's work to about a tenth of a second per request whatever the body holds; the
 * estimate's work is linear in the body, which --body-limit bounds.
 */
export const TOKENIZED_CHARS_MAX = 16_384;
/** Text is tokenized in pieces of at most this many characters, cut at a white space when there is one. */
const PIECE_CHARS = 1024;

/** The encoding of an OpenAI model, by its normalised id; undefined for every other model. */
export function encodingFor(model: string): Encoding | undefined {
  const id = normalModelId(model);
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|(openai\/)?gpt-oss)/.test(id)) return 'o200k_base';
  if (/^(gpt-4|gpt-3\.5|text-embedding-)/.test(id)) return 'cl100k_base';
  return undefined;
}

interface Tokenizer {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}

const require = createRequire(import.meta.url);
const loaded = new Map<Encoding, Tokenizer>();

/** An encoding's tables load on first use (a few hundred milliseconds, tens of MB), not at start. */
function tokenizer(encoding: Encoding): Tokenizer {
  let t = loaded.get(encoding);
  if (!t) {
    t = require(`gpt-tokenizer/encoding/${encoding}`) as Tokenizer;
    loaded.set(encoding, t);
  }
  return t;
}

/** Special-token text (`<|endoftext|>`) in a client's input is counted as text, not refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** Where to cut `s` at or before `end`: after its last white space, else at `end`. */
function cutAt(s: string, start: number, end: number): number {
  if (end >= s.length) return s.length;
  for (let i = end; i > start + PIECE_CHARS / 2; i--) if (s.charCodeAt(i) <= 32) return i;
  return end;
}

/**
 * A counter by the model's tokenizer, for one request: it reads at most `TOKENIZED_CHARS_MAX`
 * characters, then counts by the estimate. Long text is cut into pieces (byte-pair encoding slows
 * down with the length of a run without breaks); a cut inside a word may count it one token more.
 */
export function tokenizerCounter(encoding: Encoding, charsMax = TOKENIZED_CHARS_MAX): Counter {
  const t = tokenizer(encoding);
  let left = charsMax;
  return (s) => {
    if (s.length > left) return textTokens(s);
    left -= s.length;
    if (s.length <= PIECE_CHARS) return t.countTokens(s, AS_TEXT);
    let n = 0;
    for (let i = 0; i < s.length; ) {
      const end = cutAt(s, i, i + PIECE_CHARS);
      n += t.countTokens(s.slice(i, end), AS_TEXT);
      i = end;
    }
    return n;
  };
}

/** The counter for `model`: its tokenizer for an OpenAI model, else the estimate. */
export function counterFor(model: string): Counter {
  const encoding = encodingFor(model);
  return encoding ? tokenizerCounter(encoding) : textTokens;
}

/**
 * A bound no tokenizer's count exceeds: the text's UTF-8 bytes (a byte-pair token is at least one
 * byte). A request whose input fits by this count is not tokenized at all.
 */
export const utf8Bytes: Counter = (s) => Buffer.byteLength(s, 'utf8');

const asText = (v: unknown, count: Counter): number => (typeof v === 'string' ? count(v) : v === undefined || v === null ? 0 : count(JSON.stringify(v)));

function imageTokens(part: Obj): number {
  if (part.detail === 'low') return IMAGE_BASE_TOKENS;
  const size = typeof part.image_url === 'string' ? imageSize(part.image_url) : undefined;
  return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * (size ? imageTiles(size.width, size.height) : MAX_IMAGE_TILES);
}

function partTokens(part: unknown, count: Counter): number {
  if (typeof part === 'string') return count(part);
  if (!part || typeof part !== 'object') return 0;
  const p = part as Obj;
  switch (p.type) {
    case 'input_text':
    case 'output_text':
      return asText(p.text, count);
    case 'refusal':
      return asText(p.refusal, count);
    case 'input_image':
      return imageTokens(p);
    case 'input_file':
      return FILE_TOKENS;
    default:
      return asText(p, count);
  }
}

/**
 * One input item: `MESSAGE_OVERHEAD_TOKENS` for its framing, plus a message's content part by part,
 * a function call's name and arguments, a function call's output, any other item as its JSON.
 */
export function itemTokens(item: unknown, count: Counter): number {
  if (!item || typeof item !== 'object') return MESSAGE_OVERHEAD_TOKENS + asText(item, count);
  const it = item as Obj;
  let n = MESSAGE_OVERHEAD_TOKENS;
  if (it.type === 'function_call') return n + asText(it.name, count) + asText(it.arguments, count);
  if (it.type === 'function_call_output') return n + asText(it.output, count);
  if (it.type !== undefined && it.type !== 'message') return n + asText(it, count);
  if (Array.isArray(it.content)) for (const part of it.content) n += partTokens(part, count);
  else n += asText(it.content, count);
  return n;
}

/**
 * What the request takes besides its input items, which truncation cannot drop: the instructions
 * (as one more message), the tools' definitions and the text format, as their JSON.
 */
export function fixedTokens(body: Obj, count: Counter): number {
  let n = 0;
  if (typeof body.instructions === 'string' && body.instructions !== '') n += MESSAGE_OVERHEAD_TOKENS + count(body.instructions);
  if (Array.isArray(body.tools) && body.tools.length > 0) n += asText(body.tools, count);
  const format = (body.text as Obj | undefined)?.format;
  if (format && typeof format === 'object' && (format as Obj).type !== 'text') n += asText(format, count);
  return n;
}
