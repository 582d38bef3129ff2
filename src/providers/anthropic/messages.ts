/** OpenAI chat messages → Anthropic's `system` blocks and alternating user/assistant turns. Pure. */
import { GatewayError } from '../../errors/gateway-error.js';

export type Json = Record<string, unknown>;
export type Block = Json;
interface Turn {
  role: 'user' | 'assistant';
  content: string | Block[];
}

export const refuse = (param: string, why: string): GatewayError =>
  new GatewayError('invalid_request_body', `Anthropic ${why} (${param}).`, { param });

export const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** `data:<mime>;base64,<data>` → Anthropic base64 source; http(s) → url source. */
function imageSource(url: unknown, param: string): Json {
  if (typeof url !== 'string') throw refuse(param, 'needs image_url.url to be a string');
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    const header = comma < 0 ? '' : url.slice(5, comma);
    if (!header.endsWith(';base64')) throw refuse(param, 'takes base64 data URLs only (data:<type>;base64,...)');
    return { type: 'base64', media_type: header.slice(0, -7), data: url.slice(comma + 1) };
  }
  if (url.startsWith('https://') || url.startsWith('http://')) return { type: 'url', url };
  throw refuse(param, 'takes image URLs that are http(s) or base64 data URLs');
}

function withCache(block: Block, part: Json): Block {
  if (part.cache_control !== undefined) block.cache_control = part.cache_control;
  return block;
}

/** One OpenAI content part of a user (or system/tool) message → an Anthropic block. */
function userBlock(part: unknown, param: string): Block {
  if (!isObj(part)) throw refuse(param, 'needs each content part to be an object');
  switch (part.type) {
    case 'text':
      return withCache({ type: 'text', text: part.text }, part);
    case 'image_url': {
      const img = part.image_url;
      return withCache({ type: 'image', source: imageSource(isObj(img) ? img.url : img, `${param}.image_url.url`) }, part);
    }
    case 'file': {
      const f = isObj(part.file) ? part.file : {};
      if (typeof f.file_data !== 'string') throw refuse(`${param}.file`, 'takes files as file_data (a base64 data URL), not file_id');
      const src = imageSource(f.file_data, `${param}.file.file_data`);
      return withCache({ type: 'document', source: src }, part);
    }
    case 'input_audio':
      throw refuse(param, 'takes no audio input');
    default:
      // Not an OpenAI part: an Anthropic block sent as is (document, search_result, ...).
      return part;
  }
}

function contentBlocks(content: unknown, param: string): string | Block[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const out: Block[] = [];
  for (let i = 0; i < content.length; i++) out.push(userBlock(content[i], `${param}[${i}]`));
  return out;
}

/** System/developer content → text blocks appended to `system`. */
function pushSystem(system: Block[], content: unknown, param: string): void {
  if (typeof content === 'string') {
    system.push({ type: 'text', text: content });
    return;
  }
  if (!Array.isArray(content)) return;
  for (let i = 0; i < content.length; i++) {
    const p = content[i];
    if (!isObj(p) || p.type !== 'text') throw refuse(`${param}[${i}]`, 'takes text only in system messages');
    system.push(withCache({ type: 'text', text: p.text }, p));
  }
}

function assistantBlocks(m: Json, param: string): string | Block[] {
  const calls = m.tool_calls;
  const hasCalls = Array.isArray(calls) && calls.length > 0;
  if (!hasCalls && typeof m.content === 'string') return m.content;
  const out: Block[] = [];
  if (typeof m.content === 'string') {
    if (m.content !== '') out.push({ type: 'text', text: m.content });
  } else if (Array.isArray(m.content)) {
    m.content.forEach((p: unknown, i) => {
      if (!isObj(p)) throw refuse(`${param}.content[${i}]`, 'needs each content part to be an object');
      const text = p.type === 'refusal' ? p.refusal : p.text;
      if (p.type !== 'text' && p.type !== 'refusal') out.push(p);
      else if (typeof text === 'string' && text !== '') out.push(withCache({ type: 'text', text }, p));
    });
  }
  if (hasCalls) {
    (calls as unknown[]).forEach((c, i) => {
      const at = `${param}.tool_calls[${i}]`;
      if (!isObj(c) || !isObj(c.function)) throw refuse(at, 'needs function tool calls');
      const args = c.function.arguments;
      let input: unknown = {};
      if (typeof args === 'string' && args.trim() !== '') {
        try {
          input = JSON.parse(args);
        } catch {
          throw refuse(`${at}.function.arguments`, 'needs tool call arguments that are JSON');
        }
      }
      if (!isObj(input)) throw refuse(`${at}.function.arguments`, 'needs tool call arguments that are a JSON object');
      out.push({ type: 'tool_use', id: c.id, name: c.function.name, input });
    });
  }
  return out;
}

function toolResult(m: Json, param: string): Block {
  let content: unknown = m.content;
  if (Array.isArray(content)) content = contentBlocks(content, `${param}.content`);
  else if (typeof content !== 'string') content = '';
  return { type: 'tool_result', tool_use_id: m.tool_call_id, content };
}

/** Appends a turn, merging it into the previous one when both have the same role (Anthropic alternates). */
function pushTurn(turns: Turn[], role: Turn['role'], content: string | Block[]): void {
  const last = turns[turns.length - 1];
  if (!last || last.role !== role) {
    turns.push({ role, content });
    return;
  }
  const prev = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
  const next = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  last.content = prev.concat(next);
}

/** OpenAI messages → Anthropic `system` and alternating `messages`. */
export function translateMessages(messages: unknown[]): { system: Block[]; messages: Turn[] } {
  const system: Block[] = [];
  const turns: Turn[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Json;
    const param = `messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer':
        pushSystem(system, m.content, `${param}.content`);
        break;
      case 'user':
        pushTurn(turns, 'user', contentBlocks(m.content, `${param}.content`));
        break;
      case 'assistant':
        pushTurn(turns, 'assistant', assistantBlocks(m, param));
        break;
      case 'tool':
        // Consecutive tool results merge into one user turn, as Anthropic requires.
        pushTurn(turns, 'user', [toolResult(m, param)]);
        break;
      default:
        throw refuse(`${param}.role`, `has no "${String(m.role)}" messages; use tool messages`);
    }
  }
  return { system, messages: turns };
}
