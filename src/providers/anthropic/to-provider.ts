/**
 * OpenAI chat request → Anthropic Messages request. Pure: no clock, no I/O.
 *
 * Every OpenAI field is either translated, refused with a 400 naming it (when dropping it would change
 * the answer), or dropped because it cannot change the answer (listed in DROPPED). A field that is not
 * OpenAI's passes through unchanged, so Anthropic's own fields (`top_k`, `thinking`, ...) work and
 * Anthropic answers 400 naming any it does not know.
 */
import { GatewayError } from '../../errors/gateway-error.js';
import { jsonUpstream } from '../openai-compatible/to-provider.js';
import { forwardedHeaders } from '../forward-headers.js';
import type { ProviderDescriptor, ProviderRequest, Target, UpstreamRequest } from '../types.js';
import { DEFAULT_MAX_TOKENS } from './descriptor.js';

type Json = Record<string, unknown>;
type Block = Json;
interface Turn {
  role: 'user' | 'assistant';
  content: string | Block[];
}

const refuse = (param: string, why: string): GatewayError =>
  new GatewayError('invalid_request_body', `Anthropic ${why} (${param}).`, { param });

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** OpenAI fields that cannot change Anthropic's answer: not sent. */
const DROPPED: ReadonlySet<string> = new Set([
  'stream_options', // consumed by the gateway: Anthropic streams always carry usage
  'store',
  'metadata', // OpenAI's stored-completion tags; Anthropic's metadata only takes user_id (from `user`)
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_retention',
]);

/**
 * OpenAI fields Anthropic has no equivalent for: a 400 naming the field when it is set to anything
 * but its default, since dropping it would change the answer the client asked for.
 */
const REFUSED: Readonly<Record<string, (v: unknown) => string | undefined>> = {
  n: (v) => (v !== 1 ? 'returns one choice; n must be 1' : undefined),
  logprobs: (v) => (v === true ? 'returns no log probabilities' : undefined),
  top_logprobs: (v) => (v !== 0 ? 'returns no log probabilities' : undefined),
  logit_bias: (v) => (isObj(v) && Object.keys(v).length > 0 ? 'has no logit_bias' : undefined),
  presence_penalty: (v) => (v !== 0 ? 'has no presence penalty' : undefined),
  frequency_penalty: (v) => (v !== 0 ? 'has no frequency penalty' : undefined),
  seed: () => 'has no seed (sampling is not reproducible)',
  response_format: (v) => (isObj(v) && v.type !== 'text' ? 'has no response_format (JSON mode); describe the format in the prompt or use a tool' : undefined),
  functions: () => 'is reached with tools, not the legacy functions; send tools',
  function_call: () => 'is reached with tool_choice, not the legacy function_call; send tool_choice',
  modalities: (v) => (Array.isArray(v) && v.some((m) => m !== 'text') ? 'answers text only' : undefined),
  audio: () => 'answers text only (no audio)',
  prediction: () => 'has no predicted outputs',
  reasoning_effort: () => 'sets reasoning with its own `thinking` field, not reasoning_effort',
  verbosity: () => 'has no verbosity setting',
  web_search_options: () => 'has no web_search_options',
};

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

function translateTools(tools: unknown[]): Json[] {
  return tools.map((t, i) => {
    const fn = isObj(t) && t.type === 'function' && isObj(t.function) ? t.function : undefined;
    if (!fn) throw refuse(`tools[${i}].type`, 'takes function tools only');
    const out: Json = { name: fn.name, input_schema: fn.parameters ?? { type: 'object', properties: {} } };
    if (fn.description !== undefined) out.description = fn.description;
    if (isObj(t) && t.cache_control !== undefined) out.cache_control = t.cache_control;
    return out;
  });
}

/** OpenAI tool_choice → Anthropic's, and the tools it allows (`allowed_tools` narrows the list). */
function translateToolChoice(choice: unknown, tools: Json[] | undefined): { choice: Json; tools: Json[] | undefined } {
  if (choice === 'auto') return { choice: { type: 'auto' }, tools };
  if (choice === 'none') return { choice: { type: 'none' }, tools };
  if (choice === 'required') return { choice: { type: 'any' }, tools };
  if (isObj(choice)) {
    if (choice.type === 'function' && isObj(choice.function) && typeof choice.function.name === 'string') {
      return { choice: { type: 'tool', name: choice.function.name }, tools };
    }
    const allowed = choice.allowed_tools;
    if (choice.type === 'allowed_tools' && isObj(allowed) && Array.isArray(allowed.tools)) {
      const names = new Set(allowed.tools.map((t) => (isObj(t) && isObj(t.function) ? t.function.name : undefined)));
      return { choice: { type: allowed.mode === 'required' ? 'any' : 'auto' }, tools: tools?.filter((t) => names.has(t.name)) };
    }
  }
  throw refuse('tool_choice', 'takes tool_choice "auto", "none", "required", a named function or allowed_tools');
}

/** The OpenAI chat body → the Anthropic Messages body. Throws a 400 GatewayError naming a refused field. */
export function toAnthropicBody(body: Json, stream: boolean): Json {
  const out: Json = {};
  let tools: Json[] | undefined;
  let toolChoice: unknown;
  let parallel: unknown;
  let user: unknown;
  let maxTokens: unknown;
  let maxCompletion: unknown;
  for (const key in body) {
    const v = body[key];
    if (v === null || v === undefined) continue;
    switch (key) {
      case 'model':
        out.model = v;
        break;
      case 'messages': {
        const t = translateMessages(v as unknown[]);
        if (t.system.length > 0) out.system = t.system;
        out.messages = t.messages;
        break;
      }
      case 'max_tokens':
        maxTokens = v;
        break;
      case 'max_completion_tokens':
        maxCompletion = v;
        break;
      case 'temperature':
        if (typeof v === 'number' && v > 1) throw refuse('temperature', `takes temperature 0 to 1, not ${v} (OpenAI's range is 0 to 2)`);
        out.temperature = v;
        break;
      case 'stop':
        if (typeof v === 'string') out.stop_sequences = [v];
        else if (Array.isArray(v) && v.length > 0) out.stop_sequences = v;
        break;
      case 'stream':
        break;
      case 'tools':
        tools = translateTools(v as unknown[]);
        break;
      case 'tool_choice':
        toolChoice = v;
        break;
      case 'parallel_tool_calls':
        parallel = v;
        break;
      case 'user':
      case 'safety_identifier':
        user ??= v;
        break;
      default: {
        if (DROPPED.has(key)) break;
        const check = REFUSED[key];
        if (check) {
          const why = check(v);
          if (why !== undefined) throw refuse(key, why);
          break;
        }
        out[key] = v; // not an OpenAI field: Anthropic's own (top_k, thinking, ...)
      }
    }
  }
  out.max_tokens = maxCompletion ?? maxTokens ?? DEFAULT_MAX_TOKENS;
  if (toolChoice !== undefined) {
    const t = translateToolChoice(toolChoice, tools);
    tools = t.tools;
    out.tool_choice = t.choice;
  }
  if (parallel === false && tools && tools.length > 0) {
    const c = (out.tool_choice as Json | undefined) ?? { type: 'auto' };
    if (c.type !== 'none') out.tool_choice = { ...c, disable_parallel_tool_use: true };
  }
  if (tools) out.tools = tools;
  if (typeof user === 'string') out.metadata = { user_id: user };
  if (stream) out.stream = true;
  return out;
}

/** OpenAI-shaped request → Anthropic upstream request. Pure. */
export function toAnthropic(descriptor: ProviderDescriptor, req: ProviderRequest, target: Target, baseUrl: string): UpstreamRequest {
  const path = descriptor.paths[req.endpoint];
  if (!path) {
    const route = req.endpoint === 'completions' ? '/v1/completions' : `/v1/${req.endpoint}`;
    throw new GatewayError('unsupported_endpoint', `Provider ${descriptor.id} does not serve ${route}; it serves /v1/chat/completions and /v1/models.`);
  }
  // Neither its own auth header nor a fixed header (anthropic-version) can be replaced by a forwarded one.
  const headers = forwardedHeaders(req, (h) => h === descriptor.auth.header || descriptor.extraHeaders?.[h] !== undefined);
  if (descriptor.extraHeaders) Object.assign(headers, descriptor.extraHeaders);
  if (target.api_key) headers[descriptor.auth.header] = target.api_key;
  return jsonUpstream(baseUrl, path, req, target, headers, req.body && toAnthropicBody(req.body, req.stream));
}
