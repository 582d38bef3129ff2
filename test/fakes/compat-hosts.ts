/**
 * Fakes of OpenAI-compatible hosts that differ from OpenAI, written from each host's API documentation (not from
 * the gateway's translator: nothing here imports src/providers). Each is a FakeOpenAI whose chat
 * handler checks what the real host checks and answers the way the host does:
 *
 * - Mistral: Bearer key; strict validation (an unknown body field is a 422); tool-call ids must match
 *   `[a-zA-Z0-9]{9}` and every `tool_call_id` must name a tool call of an earlier assistant message;
 *   `random_seed`, not `seed`; `max_tokens`, not `max_completion_tokens`; no `stream_options`, usage
 *   on the last content chunk; may finish with `model_length`; error body `{object:"error", ...}`.
 * - DeepSeek: Bearer key; `reasoning_content` in an input message is a 400; answers carry
 *   `reasoning_content` and usage with `prompt_cache_hit_tokens`/`prompt_cache_miss_tokens`; `: keep-alive`
 *   comments while queued; may finish with `insufficient_system_resource`.
 * - Groq (legacy streams): usage only in the final chunk's `x_groq.usage`.
 */
import { FakeOpenAI, type RecordedRequest, type ScriptedResponse } from './openai-server.js';

export const MISTRAL_KEY = 'sk-mistral-fake-key';
export const DEEPSEEK_KEY = 'sk-deepseek-fake-key';
export const GROQ_KEY = 'gsk-groq-fake-key';

const sse = (objs: unknown[], opts: { comments?: string[] } = {}): string[] => [
  ...(opts.comments ?? []).map((c) => `: ${c}\n\n`),
  ...objs.map((o) => `data: ${JSON.stringify(o)}\n\n`),
  'data: [DONE]\n\n',
];

function bearer(req: RecordedRequest, key: string): boolean {
  return req.headers.authorization === `Bearer ${key}`;
}

// ------------------------------------------------------------------------------------------------
// Mistral

const MISTRAL_CHAT_FIELDS = new Set([
  'model', 'messages', 'temperature', 'top_p', 'max_tokens', 'stream', 'stop', 'random_seed', 'response_format', 'tools',
  'tool_choice', 'presence_penalty', 'frequency_penalty', 'n', 'safe_prompt', 'prediction', 'parallel_tool_calls',
]);
const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;

const mistralError = (status: number, message: string): ScriptedResponse => ({
  status,
  json: { object: 'error', message, type: status === 401 ? 'unauthorized' : 'invalid_request_error', param: null, code: null },
});

/** What Mistral refuses in a chat body, or undefined. */
function mistralRefusal(body: any): ScriptedResponse | undefined {
  for (const k of Object.keys(body ?? {})) {
    if (!MISTRAL_CHAT_FIELDS.has(k)) return mistralError(422, `Extra inputs are not permitted: body.${k}`);
  }
  const seen = new Set<string>();
  for (const [i, m] of (body.messages ?? []).entries()) {
    for (const k of Object.keys(m)) {
      if (!['role', 'content', 'name', 'tool_calls', 'tool_call_id', 'prefix'].includes(k)) {
        return mistralError(422, `Extra inputs are not permitted: body.messages.${i}.${k}`);
      }
    }
    for (const c of m.tool_calls ?? []) {
      if (!MISTRAL_ID.test(c.id)) return mistralError(422, `Tool call id was ${c.id} but must be a-z, A-Z, 0-9, with a length of 9.`);
      seen.add(c.id);
    }
    if (m.role === 'tool') {
      if (!MISTRAL_ID.test(m.tool_call_id)) return mistralError(422, `Tool call id was ${m.tool_call_id} but must be a-z, A-Z, 0-9, with a length of 9.`);
      if (!seen.has(m.tool_call_id)) return mistralError(400, `Unexpected tool call id ${m.tool_call_id}`);
    }
  }
  return undefined;
}

export interface MistralScript {
  /** Answer with a tool call (id `Ab3dE5gH9`) instead of text. */
  toolCall?: { name: string; arguments: string };
  finishReason?: string;
}

export async function startMistral(script: () => MistralScript = () => ({})): Promise<FakeOpenAI> {
  const fake = await FakeOpenAI.start();
  fake.setDefault('/v1/chat/completions', (req) => {
    if (!bearer(req, MISTRAL_KEY)) return mistralError(401, 'Unauthorized');
    const refusal = mistralRefusal(req.body);
    if (refusal) return refusal;
    const s = script();
    const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
    const base = { id: 'cmpl-mistral-1', created: 1_700_000_000, model: req.body.model };
    const toolCalls = s.toolCall ? [{ id: 'Ab3dE5gH9', type: 'function', function: s.toolCall }] : undefined;
    const finish = s.finishReason ?? (toolCalls ? 'tool_calls' : 'stop');
    if (!req.body.stream) {
      return {
        json: {
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: toolCalls ? '' : 'Bonjour', tool_calls: toolCalls ?? null, prefix: false }, finish_reason: finish }],
          usage,
        },
      };
    }
    const chunk = (delta: object, finish_reason: string | null, extra: object = {}) => ({
      ...base,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason }],
      ...extra,
    });
    // Mistral sends a tool call whole in one delta, and usage on the last content chunk.
    const chunks = toolCalls
      ? [chunk({ role: 'assistant', content: '' }, null), chunk({ tool_calls: toolCalls.map((c, index) => ({ ...c, index })) }, finish, { usage })]
      : [chunk({ role: 'assistant', content: '' }, null), chunk({ content: 'Bon' }, null), chunk({ content: 'jour' }, finish, { usage })];
    return { stream: { frames: sse(chunks) } };
  });
  return fake;
}

// ------------------------------------------------------------------------------------------------
// DeepSeek

export interface DeepSeekScript {
  finishReason?: string;
}

export async function startDeepSeek(script: () => DeepSeekScript = () => ({})): Promise<FakeOpenAI> {
  const fake = await FakeOpenAI.start();
  fake.setDefault('/v1/chat/completions', (req) => {
    if (!bearer(req, DEEPSEEK_KEY)) return { status: 401, json: { error: { message: 'Authentication Fails (no such user)', type: 'authentication_error', param: null, code: 'invalid_request_error' } } };
    for (const m of req.body?.messages ?? []) {
      if (m.reasoning_content !== undefined) {
        return { status: 400, json: { error: { message: 'The reasoning_content is an intermediate result for display purposes only and will not be included in the context for inference. Please remove the reasoning_content from your message to reduce network traffic.', type: 'invalid_request_error', param: null, code: 'invalid_request_error' } } };
      }
    }
    const s = script();
    const finish = s.finishReason ?? 'stop';
    const usage = { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28, prompt_cache_hit_tokens: 16, prompt_cache_miss_tokens: 4, completion_tokens_details: { reasoning_tokens: 3 } };
    const base = { id: 'ds-1', created: 1_700_000_000, model: req.body.model, system_fingerprint: 'fp_ds' };
    if (!req.body.stream) {
      return {
        json: {
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Paris', reasoning_content: 'The capital of France is Paris.' }, logprobs: null, finish_reason: finish }],
          usage,
        },
      };
    }
    const includeUsage = req.body.stream_options?.include_usage === true;
    const chunk = (delta: object, finish_reason: string | null) => ({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason }], ...(includeUsage ? { usage: null } : {}) });
    const chunks: object[] = [
      chunk({ role: 'assistant', content: null, reasoning_content: '' }, null),
      chunk({ content: null, reasoning_content: 'Thinking about ünïcödé…' }, null),
      chunk({ content: 'Pa', reasoning_content: null }, null),
      chunk({ content: 'rïs', reasoning_content: null }, null),
      chunk({ content: '', reasoning_content: null }, finish),
    ];
    if (includeUsage) chunks.push({ ...base, object: 'chat.completion.chunk', choices: [], usage });
    // Queued: keep-alive comments before the first event; frames split inside UTF-8 characters, CRLF line ends.
    const frames = sse(chunks, { comments: ['keep-alive', 'keep-alive'] }).map((f) => f.replace(/\n/g, '\r\n'));
    const bytes = Buffer.from(frames.join(''));
    const cut = bytes.indexOf(Buffer.from('ï')) + 1; // inside the two-byte ï
    return { stream: { frames: [bytes.subarray(0, cut), bytes.subarray(cut)] } };
  });
  return fake;
}

// ------------------------------------------------------------------------------------------------
// Groq (legacy stream usage)

export async function startGroq(): Promise<FakeOpenAI> {
  const fake = await FakeOpenAI.start();
  fake.setDefault('/v1/chat/completions', (req) => {
    if (!bearer(req, GROQ_KEY)) return { status: 401, json: { error: { message: 'Invalid API Key', type: 'invalid_request_error', code: 'invalid_api_key' } } };
    const base = { id: 'chatcmpl-groq-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: req.body.model, system_fingerprint: 'fp_groq' };
    const usage = { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9, queue_time: 0.01 };
    if (!req.body.stream) {
      return { json: { ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hey' }, finish_reason: 'stop' }], usage } };
    }
    return {
      stream: {
        frames: sse([
          { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }], x_groq: { id: 'req_1' } },
          { ...base, choices: [{ index: 0, delta: { content: 'hey' }, finish_reason: null }] },
          { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], x_groq: { id: 'req_1', usage } },
        ]),
      },
    };
  });
  return fake;
}
