import { describe, expect, it } from 'vitest';
import { imageSize } from '../../src/pricing/image-size.js';
import {
  AUDIO_BYTES_PER_TOKEN,
  DEFAULT_OUTPUT_TOKENS,
  estimateTokens,
  imageTiles,
  MAX_IMAGE_TILES,
  MEDIA_PART_TOKENS,
  textTokens,
} from '../../src/pricing/usage-estimate.js';

/** Image headers as a client would send them inline: just enough bytes for the size, then padding. */
const dataUrl = (mime: string, head: Buffer): string => `data:${mime};base64,${Buffer.concat([head, Buffer.alloc(64)]).toString('base64')}`;
function png(w: number, h: number): string {
  const b = Buffer.alloc(24);
  b.writeUInt32BE(0x89504e47, 0);
  b.writeUInt32BE(0x0d0a1a0a, 4);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return dataUrl('image/png', b);
}
function gif(w: number, h: number): string {
  const b = Buffer.alloc(10);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(w, 6);
  b.writeUInt16LE(h, 8);
  return dataUrl('image/gif', b);
}
function jpeg(w: number, h: number): string {
  // SOI, an APP0 segment of 16 bytes, then SOF0 with height and width
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof = Buffer.alloc(11);
  sof.writeUInt16BE(0xffc0, 0);
  sof.writeUInt16BE(17, 2);
  sof[4] = 8;
  sof.writeUInt16BE(h, 5);
  sof.writeUInt16BE(w, 7);
  return dataUrl('image/jpeg', Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof]));
}
function webpX(w: number, h: number): string {
  const b = Buffer.alloc(30);
  b.write('RIFF', 0, 'latin1');
  b.write('WEBPVP8X', 8, 'latin1');
  b.writeUIntLE(w - 1, 24, 3);
  b.writeUIntLE(h - 1, 27, 3);
  return dataUrl('image/webp', b);
}
function webpLossless(w: number, h: number): string {
  const b = Buffer.alloc(30);
  b.write('RIFF', 0, 'latin1');
  b.write('WEBPVP8L', 8, 'latin1');
  b[20] = 0x2f;
  b.writeUInt32LE(((w - 1) & 0x3fff) | (((h - 1) & 0x3fff) << 14), 21);
  return dataUrl('image/webp', b);
}

const user = (content: unknown) => ({ role: 'user', content });
const chat = (body: Record<string, unknown>) => estimateTokens('chat', { model: 'gpt-4o', messages: [], ...body });
const image = (url: string, detail?: string) => user([{ type: 'image_url', image_url: detail ? { url, detail } : { url } }]);
/** The input tokens of one user message holding only `part` (without the message's own 4). */
const partOf = (part: unknown, model = 'gpt-4o') => estimateTokens('chat', { model, messages: [user([part])] }).input - 4;

describe('request estimate', () => {
  it('text: a quarter of its UTF-8 bytes, rounded up', () => {
    expect(textTokens('')).toBe(0);
    expect(textTokens('hi')).toBe(1);
    expect(textTokens('hello world, how are you?')).toBe(7); // 25 bytes
    expect(textTokens('你好世界')).toBe(3); // 4 characters × 3 bytes
    expect(textTokens('привет')).toBe(3); // 6 × 2 bytes
  });

  it('chat: 4 per message plus its text and tool calls; output max_completion_tokens, max_tokens or the default, times n', () => {
    const messages = [
      { role: 'system', content: 'be brief' }, // 4 + 2
      { role: 'user', content: [{ type: 'text', text: 'what is this?' }] }, // 4 + 4
    ];
    // the model's name and numeric settings are not prompt text
    expect(estimateTokens('chat', { model: 'a-long-model-name', messages, temperature: 0.5 })).toEqual({ input: 14, output: DEFAULT_OUTPUT_TOKENS });
    const calls = [{ id: 'c', type: 'function', function: { name: 'look', arguments: '{"q":"x"}' } }];
    expect(chat({ messages: [{ role: 'assistant', content: null, tool_calls: calls }] }).input).toBe(4 + textTokens(JSON.stringify(calls)));
    expect(chat({ max_tokens: 50, n: 3 }).output).toBe(150);
    expect(chat({ max_tokens: 50, max_completion_tokens: 70 }).output).toBe(70);
    // a target's override_params win
    expect(estimateTokens('chat', { messages: [], max_tokens: 50 }, { max_tokens: 20 }).output).toBe(20);
  });

  // Each field a client could fill with 200 KB of text: counted, whichever field it is.
  const BIG = 'x'.repeat(200_000);
  const BIG_TOKENS = 50_000;
  const schema = { type: 'object', properties: { answer: { type: 'string', description: BIG } } };
  const fields: [string, Record<string, unknown>][] = [
    ['a string content', { messages: [user(BIG)] }],
    ['a text part', { messages: [user([{ type: 'text', text: BIG }])] }],
    ['a bare string part', { messages: [user([BIG])] }],
    ['a refusal part', { messages: [{ role: 'assistant', content: [{ type: 'refusal', refusal: BIG }] }] }],
    ["an assistant's refusal", { messages: [{ role: 'assistant', content: null, refusal: BIG }] }],
    ["a message's name", { messages: [{ role: 'user', content: 'hi', name: BIG }] }],
    ["a tool call's arguments", { messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: BIG } }] }] }],
    ['a legacy function_call', { messages: [{ role: 'assistant', function_call: { name: 'f', arguments: BIG } }] }],
    ['a tool message', { messages: [{ role: 'tool', tool_call_id: 'c', content: [{ type: 'text', text: BIG }] }] }],
    ["a part of a type the estimate does not know", { messages: [user([{ type: 'input_text_v9', body: BIG }])] }],
    ['a file sent inline', { messages: [user([{ type: 'file', file: { filename: 'a.txt', file_data: `data:text/plain;base64,${BIG}` } }])] }],
    ['tools', { tools: [{ type: 'function', function: { name: 'f', parameters: schema } }] }],
    ['legacy functions', { functions: [{ name: 'f', parameters: schema }] }],
    ['response_format', { response_format: { type: 'json_schema', json_schema: { name: 's', schema } } }],
    ['tool_choice', { tool_choice: { type: 'function', function: { name: BIG } } }],
    ['a field the estimate has never heard of', { instructions_v9: BIG }],
  ];
  it.each(fields)('counts %s', (_, body) => {
    expect(chat(body).input).toBeGreaterThanOrEqual(BIG_TOKENS);
  });

  it('counts a prediction as output (rejected predicted tokens are billed as completion tokens)', () => {
    const out = chat({ max_tokens: 10, prediction: { type: 'content', content: BIG } });
    expect(out.output).toBeGreaterThanOrEqual(10 + BIG_TOKENS);
  });

  it("counts a target's override_params in place of the body's fields", () => {
    const body = { model: 'gpt-4o', messages: [], response_format: { type: 'text' } };
    expect(estimateTokens('chat', body, { response_format: { type: 'json_schema', json_schema: { name: 's', schema } } }).input).toBeGreaterThanOrEqual(BIG_TOKENS);
    expect(estimateTokens('chat', { ...body, tools: [{ type: 'function', function: { name: BIG } }] }, { tools: [] }).input).toBeLessThan(10);
  });

  it('images: 85 at low detail; 85 + 170 per 512 px tile after scaling at high or auto detail; the largest when the size is unknown', () => {
    // OpenAI's worked examples: 1024² → 768² (4 tiles, 765); 2048 × 4096 → 768 × 1536 (6 tiles, 1105)
    expect(imageTiles(1024, 1024)).toBe(4);
    expect(imageTiles(2048, 4096)).toBe(6);
    expect(imageTiles(4096, 1536)).toBe(MAX_IMAGE_TILES); // 2048 × 768
    expect(imageTiles(100, 100)).toBe(1); // never scaled up
    expect(chat({ messages: [image(png(1024, 1024))] }).input).toBe(4 + 765);
    expect(chat({ messages: [image(png(2048, 4096), 'high')] }).input).toBe(4 + 1105);
    expect(chat({ messages: [image(png(2048, 4096), 'low')] }).input).toBe(4 + 85);
    expect(chat({ messages: [image('https://example.com/cat.png')] }).input).toBe(4 + 85 + 170 * MAX_IMAGE_TILES);
    expect(chat({ messages: [image('data:image/png;base64,bm90IGFuIGltYWdl')] }).input).toBe(4 + 85 + 170 * MAX_IMAGE_TILES);
    expect(partOf({ type: 'image_url', image_url: 'https://example.com/cat.png' })).toBe(85 + 170 * MAX_IMAGE_TILES);
  });

  it('images: by the model family (normalised id): gpt-4o-mini bills tiles at its own rate, patch models by 32 px patches', () => {
    const part = { type: 'image_url', image_url: { url: png(1024, 1024) } };
    expect(partOf(part, 'GPT-4o-mini-2024-07-18')).toBe(2833 + 5667 * 4);
    expect(partOf({ type: 'image_url', image_url: { url: png(1024, 1024), detail: 'low' } }, 'gpt-4o-mini')).toBe(2833);
    expect(partOf(part, 'gpt-4.1-mini')).toBe(Math.ceil(1024 * 1.62)); // 32 × 32 patches
    expect(partOf({ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }, 'gpt-4.1-nano')).toBe(Math.ceil(1536 * 2.46));
  });

  it('image sizes from PNG, GIF, JPEG and WebP headers; anything else is unknown', () => {
    expect(imageSize(png(640, 480))).toEqual({ width: 640, height: 480 });
    expect(imageSize(gif(320, 200))).toEqual({ width: 320, height: 200 });
    expect(imageSize(jpeg(1920, 1080))).toEqual({ width: 1920, height: 1080 });
    expect(imageSize(webpX(3000, 2000))).toEqual({ width: 3000, height: 2000 });
    expect(imageSize(webpLossless(800, 600))).toEqual({ width: 800, height: 600 });
    expect(imageSize('https://example.com/x.png')).toBeUndefined();
    expect(imageSize('data:image/png,raw')).toBeUndefined();
  });

  it('audio by its length at a low bitrate; a file by id at a fixed figure', () => {
    const data = Buffer.alloc(200_000).toString('base64');
    expect(partOf({ type: 'input_audio', input_audio: { data, format: 'wav' } })).toBe(Math.ceil(200_000 / AUDIO_BYTES_PER_TOKEN));
    expect(partOf({ type: 'file', file: { file_id: 'file-abc' } })).toBe(MEDIA_PART_TOKENS);
  });

  it('completions: the prompt (token ids exactly) and other text fields (suffix); output max_tokens (16 by default) × max(n, best_of); embeddings: input only', () => {
    expect(estimateTokens('completions', { model: 'm', prompt: 'say hello' })).toEqual({ input: 3, output: 16 });
    expect(estimateTokens('completions', { prompt: 'say hello', suffix: BIG }).input).toBe(3 + BIG_TOKENS);
    expect(estimateTokens('completions', { prompt: [1, 2, 3, 4], max_tokens: 5, n: 2, best_of: 3 })).toEqual({ input: 4, output: 15 });
    expect(estimateTokens('completions', { prompt: [[1, 2], [3]] })).toEqual({ input: 3, output: 16 });
    expect(estimateTokens('embeddings', { model: 'm', input: ['abcd', 'efgh'], dimensions: 256 })).toEqual({ input: 2, output: 0 });
    expect(estimateTokens('models', undefined)).toEqual({ input: 0, output: 0 });
  });
});
