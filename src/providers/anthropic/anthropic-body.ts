/**
 * OpenAI chat request → Anthropic Messages request. Pure: no clock, no I/O.
 *
 * Every OpenAI field is either translated, refused with a 400 naming it (when dropping it would change
 * the answer), or dropped because it cannot change the answer (listed in DROPPED). A field that is not
 * OpenAI's passes through unchanged, so Anthropic's own fields (`top_k`, `thinking`, ...) work and
 * Anthropic answers 400 naming any it does not know.
 */
import { DEFAULT_MAX_TOKENS } from './descriptor.js';
import { isObj, refuse, translateMessages, type Json } from './messages.js';

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
/** The fields whose translation waits for the others: read while walking the body, applied after. */
interface Deferred {
  tools?: Json[];
  toolChoice?: unknown;
  parallel?: unknown;
  user?: unknown;
  maxTokens?: unknown;
  maxCompletion?: unknown;
}

/** One field of the OpenAI body → `out`, or into `later` when it depends on other fields. */
function translateField(key: string, v: unknown, out: Json, later: Deferred): void {
  switch (key) {
    case 'model':
      out.model = v;
      return;
    case 'messages': {
      const t = translateMessages(v as unknown[]);
      if (t.system.length > 0) out.system = t.system;
      out.messages = t.messages;
      return;
    }
    case 'max_tokens':
      later.maxTokens = v;
      return;
    case 'max_completion_tokens':
      later.maxCompletion = v;
      return;
    case 'temperature':
      if (typeof v === 'number' && v > 1) throw refuse('temperature', `takes temperature 0 to 1, not ${v} (OpenAI's range is 0 to 2)`);
      out.temperature = v;
      return;
    case 'stop':
      if (typeof v === 'string') out.stop_sequences = [v];
      else if (Array.isArray(v) && v.length > 0) out.stop_sequences = v;
      return;
    case 'stream':
      return;
    case 'tools':
      later.tools = translateTools(v as unknown[]);
      return;
    case 'tool_choice':
      later.toolChoice = v;
      return;
    case 'parallel_tool_calls':
      later.parallel = v;
      return;
    case 'user':
    case 'safety_identifier':
      later.user ??= v;
      return;
    default: {
      if (DROPPED.has(key)) return;
      const check = REFUSED[key];
      if (check) {
        const why = check(v);
        if (why !== undefined) throw refuse(key, why);
        return;
      }
      out[key] = v; // not an OpenAI field: Anthropic's own (top_k, thinking, ...)
    }
  }
}

/** The OpenAI chat body → the Anthropic Messages body. Throws a 400 GatewayError naming a refused field. */
export function toAnthropicBody(body: Json, stream: boolean): Json {
  const out: Json = {};
  const later: Deferred = {};
  for (const key in body) {
    const v = body[key];
    if (v === null || v === undefined) continue;
    translateField(key, v, out, later);
  }
  let tools = later.tools;
  out.max_tokens = later.maxCompletion ?? later.maxTokens ?? DEFAULT_MAX_TOKENS;
  if (later.toolChoice !== undefined) {
    const t = translateToolChoice(later.toolChoice, tools);
    tools = t.tools;
    out.tool_choice = t.choice;
  }
  if (later.parallel === false && tools && tools.length > 0) {
    const c = (out.tool_choice as Json | undefined) ?? { type: 'auto' };
    if (c.type !== 'none') out.tool_choice = { ...c, disable_parallel_tool_use: true };
  }
  if (tools) out.tools = tools;
  if (typeof later.user === 'string') out.metadata = { user_id: later.user };
  if (stream) out.stream = true;
  return out;
}
