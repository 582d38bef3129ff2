import { bad, translateMessages, type Json } from './gemini-messages.js';

/** Request fields sent on in another shape (or read by the gateway: stream, stream_options). */
const TRANSLATED = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'n',
  'presence_penalty', 'frequency_penalty', 'seed', 'logprobs', 'top_logprobs', 'response_format', 'tools', 'tool_choice',
  'functions', 'function_call', 'reasoning_effort',
]);
/** Fields with no Gemini counterpart that change nothing about the answer: dropped. */
const DROPPED = new Set(['user', 'metadata', 'store', 'service_tier', 'parallel_tool_calls', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention']);

/** reasoning_effort → thinkingConfig.thinkingBudget: the tokens Gemini may spend thinking (0 turns thinking off). */
const THINKING_BUDGET: Readonly<Record<string, number>> = { minimal: 0, low: 1024, medium: 8192, high: 24576 };

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
