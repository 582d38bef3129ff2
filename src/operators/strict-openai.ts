import { identity, map, type MonoTypeOperatorFunction } from 'rxjs';
import type { Endpoint } from '../providers/types.js';
import type { GatewayEvent } from '../upstream/events.js';

/**
 * What may stay in an OpenAI object: `true` keeps the value whole (OpenAI's own structure below it);
 * `fields` keeps only the named keys of an object (each with its own rule); `each` applies a rule to
 * every item of an array. A value of another type than the rule expects (null, a string) is kept as is.
 */
export type Allow = true | { readonly fields: Readonly<Record<string, Allow>> } | { readonly each: Allow };

const obj = (fields: Record<string, Allow>): Allow => ({ fields });
const each = (rule: Allow): Allow => ({ each: rule });

/** usage: OpenAI's own detail fields only (no cache_write_tokens, no host extras). */
const USAGE = obj({
  prompt_tokens: true,
  completion_tokens: true,
  total_tokens: true,
  prompt_tokens_details: obj({ cached_tokens: true, audio_tokens: true }),
  completion_tokens_details: obj({ reasoning_tokens: true, audio_tokens: true, accepted_prediction_tokens: true, rejected_prediction_tokens: true }),
});
const TOP_LOGPROB = obj({ token: true, logprob: true, bytes: true });
const CHAT_LOGPROBS = obj({
  content: each(obj({ token: true, logprob: true, bytes: true, top_logprobs: each(TOP_LOGPROB) })),
  refusal: each(obj({ token: true, logprob: true, bytes: true, top_logprobs: each(TOP_LOGPROB) })),
});
const TOOL_CALL = obj({ id: true, type: true, function: obj({ name: true, arguments: true }), custom: obj({ name: true, input: true }) });
const FUNCTION_CALL = obj({ name: true, arguments: true });

/** The allow-lists of the objects the gateway answers with. */
export const OPENAI_SHAPES = {
  'chat.completion': obj({
    id: true,
    object: true,
    created: true,
    model: true,
    system_fingerprint: true,
    service_tier: true,
    usage: USAGE,
    choices: each(
      obj({
        index: true,
        finish_reason: true,
        logprobs: CHAT_LOGPROBS,
        message: obj({ role: true, content: true, refusal: true, tool_calls: each(TOOL_CALL), annotations: true, audio: true, function_call: FUNCTION_CALL }),
      }),
    ),
  }),
  'chat.completion.chunk': obj({
    id: true,
    object: true,
    created: true,
    model: true,
    system_fingerprint: true,
    service_tier: true,
    usage: USAGE,
    choices: each(
      obj({
        index: true,
        finish_reason: true,
        logprobs: CHAT_LOGPROBS,
        delta: obj({
          role: true,
          content: true,
          refusal: true,
          function_call: FUNCTION_CALL,
          tool_calls: each(obj({ index: true, id: true, type: true, function: obj({ name: true, arguments: true }) })),
        }),
      }),
    ),
  }),
  text_completion: obj({
    id: true,
    object: true,
    created: true,
    model: true,
    system_fingerprint: true,
    usage: USAGE,
    choices: each(obj({ text: true, index: true, finish_reason: true, logprobs: obj({ tokens: true, token_logprobs: true, top_logprobs: true, text_offset: true }) })),
  }),
  embeddings: obj({
    object: true,
    model: true,
    data: each(obj({ object: true, index: true, embedding: true })),
    usage: obj({ prompt_tokens: true, total_tokens: true }),
  }),
  models: obj({ object: true, data: each(obj({ id: true, object: true, created: true, owned_by: true })) }),
} as const satisfies Record<string, Allow>;

/** `value` with everything the rule does not allow removed; the input is not changed. */
export function keepAllowed(value: unknown, rule: Allow): unknown {
  if (rule === true || value === null || typeof value !== 'object') return value;
  if ('each' in rule) return Array.isArray(value) ? value.map((v) => keepAllowed(v, rule.each)) : value;
  if (Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  const src = value as Record<string, unknown>;
  for (const k in src) {
    const r = rule.fields[k];
    if (r !== undefined) out[k] = keepAllowed(src[k], r);
  }
  return out;
}

/**
 * The allow-list of an answer to `endpoint` (a stream's chunks, or its JSON body); undefined for a
 * front door whose answers are not OpenAI's chat-era shapes (responses, messages): nothing to strip.
 */
export function shapeFor(endpoint: Endpoint, stream: boolean): Allow | undefined {
  switch (endpoint) {
    case 'chat':
      return stream ? OPENAI_SHAPES['chat.completion.chunk'] : OPENAI_SHAPES['chat.completion'];
    case 'completions':
      return OPENAI_SHAPES.text_completion;
    case 'embeddings':
      return OPENAI_SHAPES.embeddings;
    case 'models':
      return OPENAI_SHAPES.models;
    case 'responses':
    case 'messages':
      return undefined;
  }
}

/**
 * `strict_vendor_compliance: true`: every field that is not OpenAI's leaves response bodies and stream
 * chunks (provider extras such as content-filter results, `x_groq`, `reasoning_content`, cache-token
 * details beyond `cached_tokens`). Only applied where the setting is on, so the pass-through pays
 * nothing; where it is on, each chunk is parsed once and written once.
 */
export interface StrictOpenAIOptions {
  endpoint: Endpoint;
  stream: boolean;
}

export function strictOpenAI(o: StrictOpenAIOptions): MonoTypeOperatorFunction<GatewayEvent> {
  const rule = shapeFor(o.endpoint, o.stream);
  if (rule === undefined) return identity;
  return map((ev) => {
    if (ev.type === 'json') {
      const body = keepAllowed(ev.body, rule);
      const { raw: _raw, ...rest } = ev;
      return { ...rest, body };
    }
    if (ev.type === 'chunk' && ev.data !== '') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(ev.data);
      } catch {
        return ev; // not JSON: nothing of ours to strip (the provider layer has already vetted it)
      }
      const data = JSON.stringify(keepAllowed(parsed, rule));
      return { ...ev, data };
    }
    return ev;
  });
}
