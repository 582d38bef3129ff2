/**
 * An Anthropic Messages request → a chat completions request, for a provider that does not serve
 * `/v1/messages` itself (src/providers/bridges/messages.ts). Pure. The rules, one per block type and
 * field, are the table in docs/messages-api.md ("Translation to other providers"): thinking,
 * redacted thinking and the blocks of Anthropic's server tools are dropped (they are the Anthropic
 * model's own record, which no other model can read or must answer); what chat cannot carry (a
 * server tool, a document by file or by PDF) is a 400 naming the field.
 */
import { createHash } from 'node:crypto';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ProviderRequest } from '../types.js';

type Json = Record<string, unknown>;
type Message = Json & { role: string };

const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Fields of the Messages request read here, or that mean nothing to chat (dropped: `thinking` and
 * `top_k` have no chat counterpart; `service_tier`, `container`, `context_management` and a
 * top-level `cache_control` are Anthropic's own settings). Never copied as they are.
 */
const MESSAGES_ONLY = new Set([
  'model', 'messages', 'system', 'max_tokens', 'stop_sequences', 'metadata', 'tools', 'tool_choice', 'stream', 'thinking',
  'top_k', 'service_tier', 'container', 'context_management', 'cache_control', 'mcp_servers',
]);

/** Blocks an Anthropic model writes when it uses a server tool (and their results): dropped from the history. */
export const SERVER_TOOL_BLOCKS: ReadonlySet<string> = new Set([
  'server_tool_use', 'web_search_tool_result', 'web_fetch_tool_result', 'code_execution_tool_result',
  'bash_code_execution_tool_result', 'text_editor_code_execution_tool_result', 'tool_search_tool_result',
  'mcp_tool_use', 'mcp_tool_result', 'container_upload',
]);

/** Blocks dropped from an assistant turn: the model's reasoning (signed, for Anthropic only) and server tools. */
const dropped = (type: unknown): boolean => type === 'thinking' || type === 'redacted_thinking' || SERVER_TOOL_BLOCKS.has(String(type));

function untranslatable(param: string, what: string): GatewayError {
  return new GatewayError('invalid_request_body', `${what} cannot be sent to this provider: it is reached through chat completions (docs/messages-api.md, Translation to other providers).`, { param });
}

/** An image block's source → a chat image part (base64 as a data URL, a URL as it is). */
function imagePart(block: Json, param: string): Json {
  const src = isObj(block.source) ? block.source : {};
  if (src.type === 'base64') return { type: 'image_url', image_url: { url: `data:${String(src.media_type)};base64,${String(src.data)}` } };
  if (src.type === 'url') return { type: 'image_url', image_url: { url: src.url } };
  throw untranslatable(`${param}.source.type`, `An image with a source of type ${String(src.type)}`);
}

/** A user turn's block (not a tool result) → a chat part; undefined when the block is dropped. */
function userPart(block: Json, param: string): Json | undefined {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return imagePart(block, param);
    case 'document': {
      const src = isObj(block.source) ? block.source : {};
      if (src.type === 'text') return { type: 'text', text: src.data };
      throw untranslatable(`${param}.source.type`, `A document with a source of type ${String(src.type)} (${param})`);
    }
    default:
      if (dropped(block.type)) return undefined;
      throw untranslatable(`${param}.type`, `A content block of type ${String(block.type)} (${param})`);
  }
}

/** A tool result's content → its text (text blocks joined by a blank line) and its images. */
function toolResult(content: unknown, param: string): { text: string; images: Json[] } {
  if (content === undefined || content === null) return { text: '', images: [] };
  if (typeof content === 'string') return { text: content, images: [] };
  const texts: string[] = [];
  const images: Json[] = [];
  (Array.isArray(content) ? content : []).forEach((b: unknown, i) => {
    const part = isObj(b) ? userPart(b, `${param}[${i}]`) : undefined;
    if (part?.type === 'text') texts.push(String(part.text));
    else if (part) images.push(part);
  });
  return { text: texts.join('\n\n'), images };
}

/** A user turn: its tool results as tool messages first (chat wants them right after the calls), then one user message with the rest. */
function addUser(out: Message[], content: unknown, param: string): void {
  if (!Array.isArray(content)) {
    out.push({ role: 'user', content });
    return;
  }
  const images: Json[] = [];
  const parts: Json[] = [];
  content.forEach((b: unknown, j) => {
    const at = `${param}[${j}]`;
    if (!isObj(b)) throw untranslatable(at, 'A content block that is not an object');
    if (b.type === 'tool_result') {
      const r = toolResult(b.content, `${at}.content`);
      out.push({ role: 'tool', tool_call_id: String(b.tool_use_id), content: r.text });
      images.push(...r.images);
      return;
    }
    const part = userPart(b, at);
    if (part) parts.push(part);
  });
  // Chat's tool messages carry text only: a tool result's images follow, in the user message.
  if (images.length + parts.length > 0) out.push({ role: 'user', content: [...images, ...parts] });
}

/** An assistant turn: its text blocks joined as the content, its tool uses as tool calls; thinking and server-tool blocks dropped. */
function addAssistant(out: Message[], content: unknown, param: string): void {
  if (!Array.isArray(content)) {
    out.push({ role: 'assistant', content });
    return;
  }
  let text = '';
  const calls: Json[] = [];
  content.forEach((b: unknown, j) => {
    const at = `${param}[${j}]`;
    if (!isObj(b)) throw untranslatable(at, 'A content block that is not an object');
    if (b.type === 'text') text += String(b.text ?? '');
    else if (b.type === 'tool_use') calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
    else if (!dropped(b.type)) throw untranslatable(`${at}.type`, `A content block of type ${String(b.type)} in an assistant turn (${at})`);
  });
  if (calls.length > 0) out.push({ role: 'assistant', content: text === '' ? null : text, tool_calls: calls });
  else if (text !== '') out.push({ role: 'assistant', content: text });
}

/** `system` (a string, or text blocks joined by a blank line) and the turns → chat messages. */
export function chatMessages(body: Json): Message[] {
  const out: Message[] = [];
  const system = body.system;
  if (typeof system === 'string' && system !== '') out.push({ role: 'system', content: system });
  else if (Array.isArray(system) && system.length > 0) {
    system.forEach((b: Json, i) => {
      if (b.type !== 'text') throw untranslatable(`system[${i}].type`, `A system block of type ${String(b.type)}`);
    });
    out.push({ role: 'system', content: system.map((b: Json) => String(b.text ?? '')).join('\n\n') });
  }
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  messages.forEach((m, i) => (m.role === 'assistant' ? addAssistant : addUser)(out, m.content, `messages[${i}].content`));
  return out;
}

/**
 * The longest tool description OpenAI and Azure OpenAI take (longer is their 400). Claude's tools
 * often have longer ones (Claude Code's do): such a description goes into the system message, under
 * a heading naming the tool, and the function's own description points there.
 */
export const TOOL_DESCRIPTION_MAX = 1024;

/** Custom tools → chat functions (`input_schema` as the parameters); Anthropic's own tools (server tools, `bash_…`, `text_editor_…`) are a 400. Long descriptions are added to `moved`. */
function chatTools(tools: unknown, moved: string[]): Json[] | undefined {
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  return tools.map((t: Json, i) => {
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') throw untranslatable(`tools[${i}].type`, `Anthropic's tool ${String(t.name)} (type ${String(t.type)})`);
    const fn: Json = { name: t.name };
    if (typeof t.description === 'string' && t.description.length > TOOL_DESCRIPTION_MAX) {
      moved.push(`# Tool ${String(t.name)}\n\n${t.description}`);
      fn.description = `Described in the system message, under "# Tool ${String(t.name)}".`;
    } else if (typeof t.description === 'string') fn.description = t.description;
    fn.parameters = t.input_schema ?? { type: 'object', properties: {} };
    if (typeof t.strict === 'boolean') fn.strict = t.strict;
    return { type: 'function', function: fn };
  });
}

/** Long tool descriptions appended to the system message (one made first when there is none). */
function addToSystem(messages: Message[], moved: string[]): void {
  if (moved.length === 0) return;
  const text = moved.join('\n\n');
  if (messages[0]?.role === 'system') messages[0].content = `${String(messages[0].content)}\n\n${text}`;
  else messages.unshift({ role: 'system', content: text });
}

/** The longest `user` OpenAI takes (longer is its 400); Claude Code's user ids are longer. */
export const USER_MAX = 64;

/** `metadata.user_id` as chat's `user`: as it is, or, when longer than OpenAI takes, its SHA-256 in hex (64 characters, the same for the same user). */
export function chatUser(id: string): string {
  return id.length <= USER_MAX ? id : createHash('sha256').update(id).digest('hex');
}

/** tool_choice → chat's: auto, any (required), a named tool, none; `disable_parallel_tool_use` → parallel_tool_calls: false. */
function setToolChoice(out: Json, choice: unknown): void {
  if (!isObj(choice)) return;
  if (choice.type === 'auto') out.tool_choice = 'auto';
  else if (choice.type === 'any') out.tool_choice = 'required';
  else if (choice.type === 'none') out.tool_choice = 'none';
  else if (choice.type === 'tool') out.tool_choice = { type: 'function', function: { name: choice.name } };
  if (choice.disable_parallel_tool_use === true && choice.type !== 'none') out.parallel_tool_calls = false;
}

/** The chat completions body of a Messages body; fields chat shares (temperature, top_p) and unknown ones kept. */
export function toChatBody(body: Json, stream: boolean): Json {
  if (body.mcp_servers !== undefined) throw untranslatable('mcp_servers', 'MCP servers (a server tool)');
  const messages = chatMessages(body);
  const out: Json = { model: body.model, messages };
  if (typeof body.max_tokens === 'number') out.max_completion_tokens = body.max_tokens;
  const moved: string[] = [];
  const tools = chatTools(body.tools, moved);
  addToSystem(messages, moved);
  if (tools) {
    out.tools = tools;
    setToolChoice(out, body.tool_choice);
  }
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) out.stop = body.stop_sequences;
  const user = isObj(body.metadata) ? body.metadata.user_id : undefined;
  if (typeof user === 'string') out.user = chatUser(user);
  for (const k in body) if (!MESSAGES_ONLY.has(k) && !(k in out) && body[k] !== undefined) out[k] = body[k];
  // The usage chunk is asked for: message_delta reports it (cache reads included).
  if (stream) Object.assign(out, { stream: true, stream_options: { include_usage: true } });
  return out;
}

/** The chat completions request of a Messages request. */
export function messagesToChat(req: ProviderRequest): ProviderRequest {
  return { ...req, endpoint: 'chat', body: toChatBody(req.body ?? {}, req.stream) };
}
