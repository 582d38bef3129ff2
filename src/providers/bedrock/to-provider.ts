import { forwardedHeaders } from '../forward-headers.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ProviderDescriptor, ProviderRequest, Target, UpstreamRequest } from '../types.js';
import { AWS_REGION } from '../../config/host-parts.js';
import { regionOf as hostRegion, withRegion } from '../hosts.js';
import { BEDROCK, CLAUDE_MODEL, CONTROL_PLANE_URL, DEFAULT_REGION, STREAM_PATH } from './descriptor.js';
import { toBedrockClaude } from './claude.js';

type Json = Record<string, unknown>;
type Block = Json;
interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

const refuse = (param: string, message: string): GatewayError => new GatewayError('invalid_request_body', message, { param });

/**
 * OpenAI chat fields and what Bedrock Converse does with them. Translated ones are read by name
 * below; `drop` ones do not change the answer (bookkeeping, routing hints) and are not sent; every
 * other OpenAI field is refused with a 400 naming it when it asks for something Converse cannot do
 * (`refuseUnless` gives the values that ask for nothing). Fields that are not OpenAI's go to
 * `additionalModelRequestFields` (model-specific: `top_k`, Claude's `thinking`), except Converse's
 * own top-level fields, which are passed as they are.
 */
const TRANSLATED = new Set(['model', 'messages', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'tools', 'tool_choice', 'stream', 'stream_options']);
const DROPPED = new Set(['user', 'metadata', 'store', 'service_tier', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'parallel_tool_calls']);
const REFUSED: Readonly<Record<string, (v: unknown) => boolean>> = {
  n: (v) => v === 1,
  logprobs: (v) => v === false,
  top_logprobs: () => false,
  logit_bias: (v) => typeof v === 'object' && v !== null && Object.keys(v).length === 0,
  response_format: (v) => (v as Json)?.type === 'text',
  seed: () => false,
  frequency_penalty: (v) => v === 0,
  presence_penalty: (v) => v === 0,
  audio: () => false,
  modalities: (v) => Array.isArray(v) && v.every((m) => m === 'text'),
  prediction: () => false,
  functions: () => false,
  function_call: () => false,
  reasoning_effort: () => false,
  verbosity: () => false,
  web_search_options: () => false,
};
/** Converse request fields a client may set directly (not OpenAI's, passed at the top level). */
const CONVERSE_FIELDS = new Set(['additionalModelResponseFieldPaths', 'guardrailConfig', 'performanceConfig', 'promptVariables', 'requestMetadata', 'serviceTier']);

const IMAGE_DATA_URL = /^data:image\/(png|jpeg|jpg|gif|webp);base64,/i;

function textOf(content: unknown, param: string, allowRefusal = false): string[] {
  if (content == null) return [];
  if (typeof content === 'string') return content === '' ? [] : [content];
  const out: string[] = [];
  (content as unknown[]).forEach((p, j) => {
    const part = p as Json;
    if (part?.type === 'text' && typeof part.text === 'string') {
      if (part.text !== '') out.push(part.text);
    } else if (allowRefusal && part?.type === 'refusal' && typeof part.refusal === 'string') {
      if (part.refusal !== '') out.push(part.refusal);
    } else {
      throw refuse(`${param}[${j}]`, `${param}[${j}]: only text parts are accepted here by provider bedrock.`);
    }
  });
  return out;
}

function imageBlock(part: Json, param: string): Block {
  const url = (part.image_url as Json | undefined)?.url;
  const m = typeof url === 'string' ? IMAGE_DATA_URL.exec(url) : null;
  if (!m) {
    throw refuse(
      `${param}.image_url.url`,
      `${param}.image_url.url: provider bedrock takes images as base64 data URLs (image/png, jpeg, gif or webp); it does not fetch remote URLs.`,
    );
  }
  const format = m[1]!.toLowerCase() === 'jpg' ? 'jpeg' : m[1]!.toLowerCase();
  return { image: { format, source: { bytes: (url as string).slice(m[0].length) } } };
}

function userBlocks(content: unknown, param: string): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (content == null) return [];
  const out: Block[] = [];
  (content as unknown[]).forEach((p, j) => {
    const part = p as Json;
    if (part?.type === 'text' && typeof part.text === 'string') {
      if (part.text !== '') out.push({ text: part.text });
    } else if (part?.type === 'image_url') {
      out.push(imageBlock(part, `${param}[${j}]`));
    } else {
      throw refuse(`${param}[${j}]`, `${param}[${j}]: provider bedrock accepts text and image_url (data URL) parts; got ${String(part?.type)}.`);
    }
  });
  return out;
}

function toolUseBlocks(calls: unknown, param: string): Block[] {
  if (calls == null) return [];
  return (calls as unknown[]).map((c, k) => {
    const call = c as Json;
    const fn = call?.function as Json | undefined;
    if (call?.type !== 'function' || !fn || typeof fn.name !== 'string' || typeof call.id !== 'string') {
      throw refuse(`${param}[${k}]`, `${param}[${k}]: a tool call needs id, type "function" and function.name.`);
    }
    let input: unknown = {};
    const args = fn.arguments;
    if (typeof args === 'string' && args.trim() !== '') {
      try {
        input = JSON.parse(args);
      } catch {
        throw refuse(`${param}[${k}].function.arguments`, `${param}[${k}].function.arguments is not valid JSON.`);
      }
    }
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      throw refuse(`${param}[${k}].function.arguments`, `${param}[${k}].function.arguments must be a JSON object for provider bedrock.`);
    }
    return { toolUse: { toolUseId: call.id, name: fn.name, input } };
  });
}

interface Translated {
  system: Block[];
  messages: Turn[];
  /** Tool names used in the history (for the stub toolConfig Converse needs then). */
  historyTools: Set<string>;
}

/** OpenAI messages → Converse `system` and turns; consecutive same-role turns are merged. */
function translateMessages(messages: unknown[]): Translated {
  const system: Block[] = [];
  const turns: Turn[] = [];
  const historyTools = new Set<string>();
  const push = (role: Turn['role'], blocks: Block[]): void => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  const toolNames = new Map<string, string>();
  messages.forEach((m, i) => {
    const msg = m as Json;
    const param = `messages[${i}]`;
    switch (msg.role) {
      case 'system':
      case 'developer':
        for (const text of textOf(msg.content, `${param}.content`)) system.push({ text });
        return;
      case 'user':
        push('user', userBlocks(msg.content, `${param}.content`));
        return;
      case 'assistant': {
        const blocks: Block[] = textOf(msg.content, `${param}.content`, true).map((text) => ({ text }));
        for (const b of toolUseBlocks(msg.tool_calls, `${param}.tool_calls`)) {
          const use = b.toolUse as { toolUseId: string; name: string };
          historyTools.add(use.name);
          toolNames.set(use.toolUseId, use.name);
          blocks.push(b);
        }
        push('assistant', blocks);
        return;
      }
      case 'tool': {
        const id = msg.tool_call_id as string;
        const name = toolNames.get(id);
        if (name !== undefined) historyTools.add(name);
        const content = textOf(msg.content, `${param}.content`).map((text) => ({ text }));
        push('user', [{ toolResult: { toolUseId: id, content } }]);
        return;
      }
      default:
        throw refuse(`${param}.role`, `${param}.role "${String(msg.role)}" is not supported by provider bedrock (use tool messages, not function).`);
    }
  });
  return { system, messages: turns, historyTools };
}

function toolSpec(t: unknown, i: number): Block {
  const tool = t as Json;
  const fn = tool?.function as Json | undefined;
  if (tool?.type !== 'function' || !fn || typeof fn.name !== 'string') {
    throw refuse(`tools[${i}]`, `tools[${i}]: provider bedrock accepts function tools only.`);
  }
  const spec: Json = { name: fn.name, inputSchema: { json: fn.parameters ?? { type: 'object', properties: {} } } };
  if (typeof fn.description === 'string') spec.description = fn.description;
  return { toolSpec: spec };
}

/** `tools` + `tool_choice` → `toolConfig` (undefined: none). */
function toolConfig(body: Json, historyTools: Set<string>): Json | undefined {
  const choice = body.tool_choice;
  let tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : [];
  let toolChoice: Json | undefined;
  if (choice === 'none') tools = [];
  else if (choice === 'required') toolChoice = { any: {} };
  else if (choice === 'auto' || choice == null) toolChoice = tools.length > 0 && choice === 'auto' ? { auto: {} } : undefined;
  else if (typeof choice === 'object' && (choice as Json).type === 'function') {
    const name = ((choice as Json).function as Json | undefined)?.name;
    if (typeof name !== 'string') throw refuse('tool_choice.function.name', 'tool_choice.function.name is required.');
    toolChoice = { tool: { name } };
  } else if (typeof choice === 'object' && (choice as Json).type === 'allowed_tools') {
    const allowed = (choice as Json).allowed_tools as Json | undefined;
    const names = new Set(((allowed?.tools as Json[] | undefined) ?? []).map((t) => (t.function as Json | undefined)?.name));
    tools = tools.filter((t) => names.has(((t as Json).function as Json | undefined)?.name));
    toolChoice = allowed?.mode === 'required' ? { any: {} } : { auto: {} };
  } else {
    throw refuse('tool_choice', 'tool_choice must be "none", "auto", "required", a function or allowed_tools.');
  }
  const specs = tools.map((t) => toolSpec(t, (body.tools as unknown[]).indexOf(t)));
  if (specs.length === 0) {
    // Converse refuses tool blocks in the history without a toolConfig: declare those tools, bare.
    if (historyTools.size === 0) return undefined;
    return { tools: [...historyTools].map((name) => ({ toolSpec: { name, inputSchema: { json: { type: 'object' } } } })) };
  }
  return toolChoice ? { tools: specs, toolChoice } : { tools: specs };
}

/** The OpenAI chat body → the Converse body. Pure; throws a 400 naming the field it cannot honour. */
export function toConverseBody(body: Json): Json {
  const additional: Json = {};
  const out: Json = {};
  for (const key in body) {
    const v = body[key];
    if (v == null || TRANSLATED.has(key) || DROPPED.has(key)) continue;
    const allowed = REFUSED[key];
    if (allowed) {
      if (!allowed(v)) throw refuse(key, `${key} is not supported by provider bedrock (Converse has no equivalent).`);
      continue;
    }
    if (CONVERSE_FIELDS.has(key)) out[key] = v;
    else if (key === 'additionalModelRequestFields' && typeof v === 'object') Object.assign(additional, v);
    else additional[key] = v;
  }
  const t = translateMessages(body.messages as unknown[]);
  const converse: Json = { messages: t.messages };
  if (t.system.length > 0) converse.system = t.system;
  const inference: Json = {};
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (max != null) inference.maxTokens = max;
  if (body.temperature != null) inference.temperature = body.temperature;
  if (body.top_p != null) inference.topP = body.top_p;
  if (body.stop != null) inference.stopSequences = typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (Object.keys(inference).length > 0) converse.inferenceConfig = inference;
  const tc = toolConfig(body, t.historyTools);
  if (tc) converse.toolConfig = tc;
  if (Object.keys(additional).length > 0) converse.additionalModelRequestFields = additional;
  return Object.assign(converse, out);
}

/** The client headers forward_headers names, less `x-amz-*` (the signature covers or sets them). */
const forwarded = (req: ProviderRequest): Record<string, string> => forwardedHeaders(req, (h) => h.startsWith('x-amz-'));

/** The region a target signs for and whose host it reaches. */
export const regionOf = (target: Target): string => hostRegion(BEDROCK, target) ?? DEFAULT_REGION;

/** A target signs with SigV4 when it has a key pair; else its api_key is a Bedrock API key. */
export const signsRequests = (target: Target): boolean =>
  typeof target.extra?.cloud_b_access_key_id === 'string' && typeof target.extra?.cloud_b_secret_access_key === 'string';

/** OpenAI-shaped request → Converse / ConverseStream (a Messages request for Claude → InvokeModel, claude.ts; or the model list). Pure; signing is `prepare`'s. */
export function toBedrock(descriptor: ProviderDescriptor, req: ProviderRequest, target: Target, baseUrl: string): UpstreamRequest {
  const region = regionOf(target);
  const headers = forwarded(req);
  if (!signsRequests(target) && target.api_key) headers.authorization = `Bearer ${target.api_key}`;
  let base = baseUrl;
  let path: string;
  let body: string | undefined;
  if (req.endpoint === 'chat' && req.body) {
    const model = req.body.model;
    if (typeof model !== 'string' || model === '') throw refuse('model', 'model is required: the Bedrock model id, inference profile or ARN.');
    path = (req.stream ? STREAM_PATH : descriptor.paths.chat!).replace('{model}', encodeURIComponent(model));
    body = JSON.stringify(toConverseBody(req.body));
    headers['content-type'] = 'application/json';
    headers.accept = req.stream ? 'application/vnd.amazon.eventstream' : 'application/json';
  } else if (req.endpoint === 'messages' && req.body && CLAUDE_MODEL.test(String(req.body.model))) {
    let accept: string;
    ({ path, body, accept } = toBedrockClaude(req));
    headers['content-type'] = 'application/json';
    headers.accept = accept;
  } else if (req.endpoint === 'models') {
    // The list lives on the control plane; a custom_host (or operator base URL) serves it below itself.
    if (baseUrl === descriptor.baseUrl) base = CONTROL_PLANE_URL;
    path = descriptor.paths.models!;
    headers.accept = 'application/json';
  } else {
    throw new GatewayError('unsupported_endpoint', `Provider ${descriptor.id} does not serve ${req.endpoint} (only chat completions and models).`, {
      param: 'provider',
    });
  }
  const url = withRegion(base, region, 'cloud_b_region', AWS_REGION, DEFAULT_REGION);
  headers.host = url.host;
  return {
    origin: url.origin,
    path: url.pathname.replace(/\/+$/, '') + path,
    method: body === undefined ? 'GET' : 'POST',
    headers,
    body,
    stream: req.stream,
  };
}
