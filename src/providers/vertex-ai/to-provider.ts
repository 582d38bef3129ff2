import { forwardedHeaders } from '../forward-headers.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ProviderRequest, Target, UpstreamRequest } from '../types.js';
import { GCP_REGION } from '../../config/provider-fields.js';
import { withRegion } from '../hosts.js';
import { VERTEX_AI, VERTEX_BASE_URL } from './descriptor.js';

type Json = Record<string, unknown>;
type Part = Json;
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

const bad = (param: string, message: string): GatewayError => new GatewayError('invalid_request_body', message, { param });

/** The default host of a region (global and the multi-regions have their own). */
export function regionalBase(region: string): string {
  if (region === 'global') return 'https://aiplatform.googleapis.com';
  if (region === 'us' || region === 'eu') return `https://aiplatform.${region}.rep.googleapis.com`;
  return `https://${region}-aiplatform.googleapis.com`;
}

/**
 * origin and path prefix per (base URL, region): parsed once (base URLs and regions are few). The
 * region is a Google Cloud location name (else a 400 naming cloud_c_region) and is put into the
 * host with the URL API (src/providers/hosts.ts).
 */
const hosts = new Map<string, { origin: string; prefix: string }>();
function hostOf(baseUrl: string, region: string, custom: boolean): { origin: string; prefix: string } {
  const key = `${custom ? 'c' : 'd'}\u0000${baseUrl}\u0000${region}`;
  let hit = hosts.get(key);
  if (hit) return hit;
  const base = baseUrl === VERTEX_BASE_URL && !custom && GCP_REGION.test(region) ? regionalBase(region) : baseUrl;
  const u = withRegion(base, region, 'cloud_c_region', GCP_REGION, 'us-central1, global, us or eu');
  hit = { origin: u.origin, prefix: u.pathname.replace(/\/+$/, '') };
  if (hosts.size > 1000) hosts.clear();
  hosts.set(key, hit);
  return hit;
}

/** Request fields sent on in another shape (or read by the gateway: stream, stream_options). */
const TRANSLATED = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'n',
  'presence_penalty', 'frequency_penalty', 'seed', 'logprobs', 'top_logprobs', 'response_format', 'tools', 'tool_choice',
  'functions', 'function_call', 'reasoning_effort',
]);
/** Fields with no Gemini counterpart that change nothing about the answer: dropped (docs/providers.md lists them). */
const DROPPED = new Set(['user', 'metadata', 'store', 'service_tier', 'parallel_tool_calls', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention']);

/** reasoning_effort → thinkingConfig.thinkingBudget (tokens); docs/providers.md documents the numbers. */
const THINKING_BUDGET: Readonly<Record<string, number>> = { minimal: 0, low: 1024, medium: 8192, high: 24576 };

const MIME_BY_EXT: Readonly<Record<string, string>> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', heic: 'image/heic',
  heif: 'image/heif', pdf: 'application/pdf', mp3: 'audio/mpeg', wav: 'audio/wav', mp4: 'video/mp4',
};

/** `data:<mime>;base64,<b64>` → inlineData; an http(s) or gs:// URL → fileData. */
function urlPart(url: unknown, param: string): Part {
  if (typeof url !== 'string' || url === '') throw bad(param, `${param} must be a URL string.`);
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    const meta = url.slice(5, comma);
    if (comma < 0 || !meta.endsWith(';base64')) throw bad(param, `${param} must be a base64 data URL (data:<mime>;base64,...).`);
    return { inlineData: { mimeType: meta.slice(0, -7) || 'application/octet-stream', data: url.slice(comma + 1) } };
  }
  if (/^(https?|gs):\/\//.test(url)) {
    const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
    const mimeType = (ext && MIME_BY_EXT[ext]) ?? 'image/jpeg';
    return { fileData: { mimeType, fileUri: url } };
  }
  throw bad(param, `${param} must be a data:, https:// or gs:// URL.`);
}

/** OpenAI content (string or parts) → Gemini parts. */
function contentParts(content: unknown, param: string, textOnly: boolean): Part[] {
  if (content == null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const out: Part[] = [];
  (content as unknown[]).forEach((p, j) => {
    const at = `${param}[${j}]`;
    const part = p as Json;
    const type = part?.type;
    if ((type === 'text' || type === 'refusal') && typeof (part.text ?? part.refusal) === 'string') {
      const text = (part.text ?? part.refusal) as string;
      if (text !== '') out.push({ text });
      return;
    }
    if (!textOnly && type === 'image_url') {
      out.push(urlPart((part.image_url as Json | undefined)?.url, `${at}.image_url.url`));
      return;
    }
    if (!textOnly && type === 'input_audio') {
      const a = part.input_audio as Json | undefined;
      if (typeof a?.data !== 'string') throw bad(`${at}.input_audio.data`, `${at}.input_audio.data must be base64 audio.`);
      out.push({ inlineData: { mimeType: a.format === 'mp3' ? 'audio/mpeg' : 'audio/wav', data: a.data } });
      return;
    }
    if (!textOnly && type === 'file' && typeof (part.file as Json | undefined)?.file_data === 'string') {
      out.push(urlPart((part.file as Json).file_data, `${at}.file.file_data`));
      return;
    }
    throw bad(`${at}.type`, `vertex-ai does not take a content part of type ${JSON.stringify(type)} here (${at}).`);
  });
  return out;
}

function parseArgs(args: unknown, param: string): Json {
  if (args === undefined || args === '') return {};
  try {
    const v: unknown = JSON.parse(args as string);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Json;
  } catch {
    // fall through
  }
  throw bad(param, `${param} must be a JSON object in a string.`);
}

/** A tool result → the object Gemini's functionResponse.response needs. */
function responseOf(content: unknown, param: string): Json {
  const parts = contentParts(content, param, true);
  return { content: parts.map((p) => p.text as string).join('') };
}

interface Contents {
  system: Part[];
  contents: Content[];
}

/** messages[] → systemInstruction parts and user/model turns (consecutive same-role turns merged). */
function translateMessages(messages: unknown[]): Contents {
  const system: Part[] = [];
  const contents: Content[] = [];
  /** tool_call_id → function name, from the assistant turns seen so far (the latest wins). */
  const callNames = new Map<string, string>();
  const push = (role: Content['role'], parts: Part[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  messages.forEach((raw, i) => {
    const m = raw as Json;
    const at = `messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(...contentParts(m.content, `${at}.content`, true));
        return;
      case 'user':
        push('user', contentParts(m.content, `${at}.content`, false));
        return;
      case 'assistant': {
        const parts = contentParts(m.content, `${at}.content`, true);
        const calls = m.tool_calls as Json[] | undefined;
        if (Array.isArray(calls)) {
          calls.forEach((c, j) => {
            const fn = c?.function as Json | undefined;
            if (typeof fn?.name !== 'string') throw bad(`${at}.tool_calls[${j}].function.name`, `${at}.tool_calls[${j}].function.name must be a string.`);
            if (typeof c.id === 'string') callNames.set(c.id, fn.name);
            parts.push({ functionCall: { name: fn.name, args: parseArgs(fn.arguments, `${at}.tool_calls[${j}].function.arguments`) } });
          });
        }
        const legacy = m.function_call as Json | undefined;
        if (legacy && typeof legacy.name === 'string') {
          parts.push({ functionCall: { name: legacy.name, args: parseArgs(legacy.arguments, `${at}.function_call.arguments`) } });
        }
        push('model', parts);
        return;
      }
      case 'tool': {
        const id = m.tool_call_id;
        const name = typeof id === 'string' ? callNames.get(id) : undefined;
        if (name === undefined) {
          throw bad(`${at}.tool_call_id`, `${at}.tool_call_id names no tool call of an earlier assistant message (Gemini needs the function's name).`);
        }
        push('user', [{ functionResponse: { name, response: responseOf(m.content, `${at}.content`) } }]);
        return;
      }
      case 'function':
        if (typeof m.name !== 'string') throw bad(`${at}.name`, `${at}.name must be a string.`);
        push('user', [{ functionResponse: { name: m.name, response: responseOf(m.content, `${at}.content`) } }]);
        return;
      default:
        throw bad(`${at}.role`, `${at}.role ${JSON.stringify(m.role)} is not supported.`);
    }
  });
  return { system, contents };
}

/** tools (and legacy functions) → one functionDeclarations tool. */
function declarations(body: Json): Json[] | undefined {
  const out: Json[] = [];
  const add = (fn: Json | undefined, param: string): void => {
    if (typeof fn?.name !== 'string') throw bad(`${param}.name`, `${param}.name must be a string.`);
    const d: Json = { name: fn.name };
    if (typeof fn.description === 'string') d.description = fn.description;
    // JSON Schema as given (Gemini's parametersJsonSchema), so no keyword needs stripping.
    if (fn.parameters != null) d.parametersJsonSchema = fn.parameters;
    out.push(d);
  };
  if (Array.isArray(body.tools)) {
    (body.tools as Json[]).forEach((t, i) => {
      if (t?.type !== 'function') throw bad(`tools[${i}].type`, `vertex-ai takes only tools of type "function" (tools[${i}]).`);
      add(t.function as Json | undefined, `tools[${i}].function`);
    });
  }
  if (Array.isArray(body.functions)) (body.functions as Json[]).forEach((f, i) => add(f, `functions[${i}]`));
  return out.length > 0 ? out : undefined;
}

/** tool_choice (or legacy function_call) → functionCallingConfig; may narrow the declarations. */
function toolConfig(body: Json, decls: Json[] | undefined): Json | undefined {
  const choice = body.tool_choice ?? body.function_call;
  const param = body.tool_choice !== undefined ? 'tool_choice' : 'function_call';
  if (choice == null) return undefined;
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required' || choice === 'any') return { mode: 'ANY' };
  const c = choice as Json;
  const named = (c.function as Json | undefined)?.name ?? c.name;
  if (typeof named === 'string' && (c.type === 'function' || param === 'function_call')) return { mode: 'ANY', allowedFunctionNames: [named] };
  if (c.type === 'allowed_tools') {
    const at = c.allowed_tools as Json | undefined;
    const names = Array.isArray(at?.tools) ? (at.tools as Json[]).map((t) => (t?.function as Json | undefined)?.name ?? t?.name) : [];
    if (names.length === 0 || names.some((n) => typeof n !== 'string')) {
      throw bad(`${param}.allowed_tools.tools`, `${param}.allowed_tools.tools must name functions.`);
    }
    if (at!.mode === 'required') return { mode: 'ANY', allowedFunctionNames: names };
    if (at!.mode === 'auto') {
      // Gemini's allowedFunctionNames applies to ANY only: for auto, declare only the allowed functions.
      if (decls) {
        const keep = new Set(names as string[]);
        for (let i = decls.length - 1; i >= 0; i--) if (!keep.has(decls[i]!.name as string)) decls.splice(i, 1);
      }
      return { mode: 'AUTO' };
    }
    throw bad(`${param}.allowed_tools.mode`, `${param}.allowed_tools.mode must be "auto" or "required".`);
  }
  throw bad(param, `${param} must be "auto", "none", "required", or name a function.`);
}

function generationConfig(body: Json): Json | undefined {
  const g: Json = {};
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens != null) g.maxOutputTokens = maxTokens;
  if (body.temperature != null) g.temperature = body.temperature;
  if (body.top_p != null) g.topP = body.top_p;
  if (body.stop != null) g.stopSequences = typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (body.n != null) g.candidateCount = body.n;
  if (body.presence_penalty != null) g.presencePenalty = body.presence_penalty;
  if (body.frequency_penalty != null) g.frequencyPenalty = body.frequency_penalty;
  if (body.seed != null) g.seed = body.seed;
  if (body.logprobs === true) g.responseLogprobs = true;
  if (body.top_logprobs != null) g.logprobs = body.top_logprobs;
  const rf = body.response_format as Json | undefined | null;
  if (rf != null) {
    if (rf.type === 'json_object') g.responseMimeType = 'application/json';
    else if (rf.type === 'json_schema') {
      const schema = (rf.json_schema as Json | undefined)?.schema;
      g.responseMimeType = 'application/json';
      if (schema != null) g.responseJsonSchema = schema;
    } else if (rf.type !== 'text') throw bad('response_format.type', 'response_format.type must be text, json_object or json_schema.');
  }
  if (body.reasoning_effort != null) {
    const budget = THINKING_BUDGET[body.reasoning_effort as string];
    if (budget === undefined) throw bad('reasoning_effort', 'reasoning_effort must be minimal, low, medium or high for vertex-ai.');
    g.thinkingConfig = { thinkingBudget: budget };
  }
  for (const _ in g) return g;
  return undefined;
}

/** The OpenAI chat body → a Gemini GenerateContentRequest. Pure. */
export function toGeminiRequest(body: Json): Json {
  for (const k in body) {
    if (!TRANSLATED.has(k) && !DROPPED.has(k) && body[k] !== undefined) {
      throw bad(k, `vertex-ai has no counterpart for "${k}"; remove it (see docs/providers.md, Vertex AI).`);
    }
  }
  const { system, contents } = translateMessages(body.messages as unknown[]);
  if (contents.length === 0) throw bad('messages', 'messages must hold at least one user, assistant or tool message for vertex-ai.');
  const out: Json = { contents };
  if (system.length > 0) out.systemInstruction = { parts: system };
  const decls = declarations(body);
  const fcc = toolConfig(body, decls);
  if (decls) out.tools = [{ functionDeclarations: decls }];
  if (fcc) out.toolConfig = { functionCallingConfig: fcc };
  const g = generationConfig(body);
  if (g) out.generationConfig = g;
  return out;
}

/** The client headers forward_headers names (x-goog-user-project, say), never Google's API key. */
const forwarded = (req: ProviderRequest): Record<string, string> => forwardedHeaders(req, (h) => h === 'x-goog-api-key');

function extraString(target: Target, field: string): string | undefined {
  const v = target.extra?.[field];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The OpenAI-shaped request → a Vertex request (the token, if any, is added by `prepare`). Pure. */
export function toVertex(req: ProviderRequest, target: Target, baseUrl: string): UpstreamRequest {
  if (req.endpoint !== 'chat' && req.endpoint !== 'models') {
    throw new GatewayError('unsupported_endpoint', `Provider vertex-ai does not serve ${req.endpoint} (only chat completions and models).`);
  }
  const region = extraString(target, 'cloud_c_region');
  if (region === undefined) {
    throw new GatewayError('invalid_config', 'vertex-ai needs cloud_c_region: a region such as us-central1, global, us or eu.', { param: 'cloud_c_region' });
  }
  const { origin, prefix } = hostOf(baseUrl, region, target.custom_host !== undefined);
  const headers = forwarded(req);
  const sa = target.extra?.cloud_c_service_account_json as Json | undefined;
  if (!sa) {
    if (target.api_key === undefined) {
      throw new GatewayError('missing_provider_credential', 'vertex-ai needs an access token (Authorization: Bearer) or cloud_c_service_account_json.', {
        param: 'authorization',
      });
    }
    headers.authorization = `Bearer ${target.api_key}`;
  }
  if (req.endpoint === 'models') return { origin, path: prefix + VERTEX_AI.paths.models!, method: 'GET', headers, stream: false };

  const project = extraString(target, 'cloud_c_project_id') ?? (typeof sa?.project_id === 'string' ? sa.project_id : undefined);
  if (project === undefined) {
    throw new GatewayError('invalid_config', 'vertex-ai needs cloud_c_project_id (or a service account with project_id).', { param: 'cloud_c_project_id' });
  }
  const body = req.body!;
  const model = typeof body.model === 'string' ? body.model.replace(/^(?:google\/|publishers\/google\/models\/)/, '') : '';
  if (model === '') throw bad('model', 'model must name a Gemini model, e.g. gemini-2.5-flash.');
  const method = req.stream ? ':streamGenerateContent?alt=sse' : VERTEX_AI.paths.chat!;
  headers['content-type'] = 'application/json';
  if (req.stream) headers.accept = 'text/event-stream';
  return {
    origin,
    method: 'POST',
    path: `${prefix}/v1/projects/${encodeURIComponent(project)}/locations/${region}/publishers/google/models/${encodeURIComponent(model)}${method}`,
    headers,
    body: JSON.stringify(toGeminiRequest(body)),
    stream: req.stream,
  };
}
