/**
 * A Responses API request → a chat completions request, for a provider that does not serve
 * `/responses` itself (src/providers/bridges/responses.ts). Pure. What chat cannot carry (built-in
 * tools, items of other types; an item reference the stored-responses stage did not resolve) is a
 * 400 naming the field.
 */
import { GatewayError } from '../../errors/gateway-error.js';
import type { ProviderRequest } from '../types.js';

type Json = Record<string, unknown>;
type Message = Json & { role: string };

const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Fields of the Responses request that are read here (or mean nothing to chat): never copied as they are. */
const RESPONSES_ONLY = new Set([
  'input', 'instructions', 'previous_response_id', 'tools', 'tool_choice', 'max_output_tokens', 'metadata', 'truncation',
  'store', 'stream', 'stream_options', 'background', 'text', 'reasoning', 'include', 'conversation', 'prompt', 'max_tool_calls',
  'parallel_tool_calls',
]);

function untranslatable(param: string, what: string): GatewayError {
  return new GatewayError('invalid_request_body', `${what} cannot be sent to this provider: it is reached through chat completions.`, { param });
}

/** One content part of an input message → a chat content part. */
function chatPart(part: unknown, param: string): unknown {
  if (typeof part === 'string') return { type: 'text', text: part };
  if (!isObj(part)) throw untranslatable(param, 'A content part that is not an object');
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text };
    case 'refusal':
      return { type: 'text', text: part.refusal };
    case 'input_image': {
      if (typeof part.image_url !== 'string') throw untranslatable(`${param}.image_url`, 'An image by file_id');
      return { type: 'image_url', image_url: part.detail === undefined ? { url: part.image_url } : { url: part.image_url, detail: part.detail } };
    }
    case 'input_file': {
      const file: Json = {};
      for (const k of ['file_data', 'file_id', 'filename']) if (part[k] !== undefined) file[k] = part[k];
      return { type: 'file', file };
    }
    case 'input_audio':
      return { type: 'input_audio', input_audio: part.input_audio };
    default:
      throw untranslatable(`${param}.type`, `A content part of type ${String(part.type)}`);
  }
}

/** A message's content: a string as it is; parts translated (an assistant's as one string: chat's assistant content is text). */
function chatContent(role: string, content: unknown, param: string): unknown {
  if (!Array.isArray(content)) return content;
  const parts = content.map((p, i) => chatPart(p, `${param}[${i}]`));
  if (role !== 'assistant') return parts;
  return parts.map((p) => ((p as Json).type === 'text' ? String((p as Json).text ?? '') : '')).join('');
}

/** A function call's output: text as it is, parts as their texts joined. */
function outputText(output: unknown): unknown {
  if (!Array.isArray(output)) return typeof output === 'string' ? output : JSON.stringify(output);
  return output.map((p, i) => chatPart(p, `output[${i}]`));
}

/** Input items → chat messages, consecutive function calls (and the assistant text before them) joined into one assistant message. */
export function chatMessages(body: Json): Message[] {
  const messages: Message[] = [];
  if (typeof body.instructions === 'string') messages.push({ role: 'system', content: body.instructions });
  const input = body.input;
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  else if (Array.isArray(input)) input.forEach((item: unknown, i) => addItem(messages, item as Json, `input[${i}]`));
  return messages;
}

function addItem(messages: Message[], item: Json, param: string): void {
  const type = item.type ?? 'message';
  if (type === 'message') {
    const role = String(item.role);
    messages.push({ role, content: chatContent(role, item.content, `${param}.content`) });
  } else if (type === 'function_call') {
    const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
    const last = messages[messages.length - 1];
    if (last?.role === 'assistant') last.tool_calls = [...((last.tool_calls as unknown[] | undefined) ?? []), call];
    else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
  } else if (type === 'function_call_output') {
    messages.push({ role: 'tool', tool_call_id: String(item.call_id), content: outputText(item.output) });
  } else if (type !== 'reasoning') {
    // A reasoning item is the model's own; chat has no place for it, and the answer does not need it.
    throw untranslatable(`${param}.type`, `An input item of type ${String(type)}`);
  }
}

function chatTools(tools: unknown): unknown[] | undefined {
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  return tools.map((t: Json, i) => {
    if (t.type !== 'function') throw untranslatable(`tools[${i}].type`, `A ${String(t.type)} tool`);
    const fn: Json = { name: t.name };
    for (const k of ['description', 'parameters', 'strict']) if (t[k] !== undefined && t[k] !== null) fn[k] = t[k];
    return { type: 'function', function: fn };
  });
}

function chatToolChoice(choice: unknown): unknown {
  if (choice === undefined || typeof choice === 'string') return choice;
  const c = choice as Json;
  if (c.type === 'function') return { type: 'function', function: { name: c.name } };
  throw untranslatable('tool_choice.type', `A tool choice of type ${String(c.type)}`);
}

/** `text.format` → `response_format`: JSON object or JSON schema; plain text is chat's default. */
function responseFormat(text: unknown): unknown {
  const f = isObj(text) && isObj(text.format) ? text.format : undefined;
  if (!f || f.type === 'text') return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  if (f.type === 'json_schema') {
    const js: Json = { name: f.name, schema: f.schema };
    if (f.strict !== undefined) js.strict = f.strict;
    if (f.description !== undefined) js.description = f.description;
    return { type: 'json_schema', json_schema: js };
  }
  throw untranslatable('text.format.type', `A text format of type ${String(f.type)}`);
}

/** The chat completions body of a Responses body; fields chat shares (user, seed, service_tier, ...) and unknown ones kept. */
export function toChatBody(body: Json, stream: boolean): Json {
  const out: Json = { model: body.model, messages: chatMessages(body) };
  const set = (k: string, v: unknown): void => {
    if (v !== undefined && v !== null) out[k] = v;
  };
  const tools = chatTools(body.tools);
  set('tools', tools);
  set('tool_choice', chatToolChoice(body.tool_choice));
  if (tools) set('parallel_tool_calls', body.parallel_tool_calls);
  set('max_completion_tokens', body.max_output_tokens);
  set('response_format', responseFormat(body.text));
  set('reasoning_effort', isObj(body.reasoning) ? body.reasoning.effort : undefined);
  for (const k in body) if (!RESPONSES_ONLY.has(k) && !(k in out)) out[k] = body[k];
  // The usage chunk is asked for: the response object reports it (cached and reasoning details included).
  if (stream) Object.assign(out, { stream: true, stream_options: { include_usage: true } });
  return out;
}

/** The chat completions request of a Responses request. */
export function responsesToChat(req: ProviderRequest): ProviderRequest {
  return { ...req, endpoint: 'chat', body: toChatBody(req.body ?? {}, req.stream) };
}
