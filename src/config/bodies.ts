/**
 * Request-body schemas for the gateway's OpenAI-shaped endpoints (chat completions, legacy
 * completions, embeddings). They run on every request, so they are kept shallow and single-pass:
 *
 * - Every object is loose: fields the gateway does not know are passed through to the provider
 *   unchanged (validated known fields keep their values).
 * - Message content parts, tool definitions and the like are checked only for their outer type.
 * - Prompts / embedding inputs (possibly huge token arrays) are checked by one hand-written loop that
 *   stops at the first bad element, instead of a `z.union` of array types that would walk the array
 *   once per branch and collect one issue per element.
 *
 * Errors go through `parseOrThrow`, so a bad body is a 400 `invalid_request_body` GatewayError whose
 * `param` is the dotted path of the first bad field and whose `issues` carry the full paths.
 */
import { z } from 'zod';
import { parseOrThrow } from './issues.js';

// ---------------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------------

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v === undefined) return 'nothing';
  return `a ${typeof v}`;
}

/** The top-level error for a body that is not a JSON object (array, string, number, null...). */
const bodyObjectError = (iss: { code?: string; input?: unknown }): string | undefined =>
  iss.code === 'invalid_type' ? `expected a JSON object, got ${kindOf(iss.input)}` : undefined;

const temperature = z.number().min(0).max(2);
const topP = z.number().min(0).max(1);
const penalty = z.number().min(-2).max(2);
const nonNegInt = z.int().min(0);
/** Any safe integer (OpenAI documents roughly ±9.2e18; JSON numbers beyond 2^53 lose precision anyway). */
const seed = z.int();
const nChoices = z.int().min(1).max(128);

/** Token ids as object keys: "50256". */
const TOKEN_ID_KEY = /^\d+$/;
const logitBias = z.record(
  z.string().regex(TOKEN_ID_KEY),
  z.number().min(-100).max(100),
  {
    error: (iss) =>
      iss.code === 'invalid_key' ? 'logit_bias keys must be token ids (non-negative integer strings)' : undefined,
  },
);

const stop = z.union([z.string(), z.array(z.string()).max(4)], {
  error: 'stop must be a string or an array of at most 4 strings',
});

const streamOptions = z.looseObject({ include_usage: z.boolean().optional() });

type Path = (string | number)[];

function pushIssue(ctx: z.core.ParsePayload, path: Path, message: string, input: unknown): void {
  ctx.issues.push({ code: 'custom', message, path, input });
}

/**
 * Runs an object-level cross-field check only when the body is an object and none of `keys` (nor the
 * body itself) already failed, so cross-field errors are reported alongside unrelated field errors
 * but never on top of a bad value of the same fields.
 */
function whenFieldsValid(...keys: string[]) {
  return (payload: z.core.ParsePayload): boolean => {
    const v = payload.value;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
    for (const iss of payload.issues) {
      const head = iss.path?.[0];
      if (head === undefined || keys.includes(head as string)) return false;
    }
    return true;
  };
}

/**
 * `stream_options` is only accepted together with `stream: true` (OpenAI answers 400 otherwise).
 * Cross-field checks are zod checks on the payload (`_check` with `when`), not superRefine, which
 * attaches and deletes a closure on every payload it runs on.
 */
const streamOptionsCheck = () =>
  z.core._check<{ stream?: boolean | null; stream_options?: unknown }>(
    (ctx) => {
      const body = ctx.value;
      if (body.stream_options != null && body.stream !== true) {
        pushIssue(ctx, ['stream_options'], 'stream_options is only allowed when stream is true', body.stream_options);
      }
    },
    { when: whenFieldsValid('stream', 'stream_options') },
  );

// ---------------------------------------------------------------------------------------------
// Prompts and embedding inputs: string | string[] | number[] | number[][] in one pass
// ---------------------------------------------------------------------------------------------

type TokenInput = string | string[] | number[] | number[][];

const isTokenId = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;

/**
 * Validates a prompt-like field. The kind of array is taken from its first element and every element
 * must then have that kind; the loop stops at the first bad element (one issue, precise path).
 */
function checkTokenInput(value: unknown, ctx: z.core.ParsePayload, field: string, nonEmpty: boolean): void {
  const expected = 'a string, an array of strings, an array of token ids or an array of token-id arrays';
  if (typeof value === 'string') {
    if (nonEmpty && value.length === 0) pushIssue(ctx, [], `${field} must not be an empty string`, value);
    return;
  }
  if (!Array.isArray(value)) {
    if (value === undefined) {
      ctx.issues.push({ code: 'invalid_type', expected: 'string', path: [], input: value, message: `${field} is required` });
    } else {
      pushIssue(ctx, [], `${field} must be ${expected}, got ${kindOf(value)}`, value);
    }
    return;
  }
  if (value.length === 0) {
    if (nonEmpty) pushIssue(ctx, [], `${field} must not be an empty array`, value);
    return;
  }
  const first: unknown = value[0];
  if (typeof first === 'string') {
    for (let i = 0; i < value.length; i++) {
      const s: unknown = value[i];
      if (typeof s !== 'string') {
        pushIssue(ctx, [i], `${field} is an array of strings, so every item must be a string; got ${kindOf(s)}`, s);
        return;
      }
      if (nonEmpty && s.length === 0) {
        pushIssue(ctx, [i], `${field} must not contain empty strings`, s);
        return;
      }
    }
    return;
  }
  if (typeof first === 'number') {
    for (let i = 0; i < value.length; i++) {
      if (!isTokenId(value[i])) {
        pushIssue(ctx, [i], `${field} is an array of token ids, so every item must be an integer >= 0`, value[i]);
        return;
      }
    }
    return;
  }
  if (Array.isArray(first)) {
    for (let i = 0; i < value.length; i++) {
      const row: unknown = value[i];
      if (!Array.isArray(row)) {
        pushIssue(ctx, [i], `${field} is an array of token-id arrays, so every item must be an array; got ${kindOf(row)}`, row);
        return;
      }
      if (nonEmpty && row.length === 0) {
        pushIssue(ctx, [i], `${field} must not contain empty token arrays`, row);
        return;
      }
      for (let j = 0; j < row.length; j++) {
        if (!isTokenId(row[j])) {
          pushIssue(ctx, [i, j], 'token ids must be integers >= 0', row[j]);
          return;
        }
      }
    }
    return;
  }
  pushIssue(ctx, [0], `${field} must be ${expected}; got an array of ${kindOf(first).replace(/^an? /, '')}s`, first);
}

function tokenInput(field: string, nonEmpty: boolean) {
  return z.custom<TokenInput>().check((ctx) => checkTokenInput(ctx.value, ctx, field, nonEmpty));
}

// ---------------------------------------------------------------------------------------------
// POST /v1/chat/completions
// ---------------------------------------------------------------------------------------------

export const MESSAGE_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;

const messageContent = z.union([z.string(), z.array(z.unknown()), z.null()], {
  error: 'content must be a string, an array of content parts, or null',
});

export const ChatMessage = z
  .looseObject({
    role: z.enum(MESSAGE_ROLES),
    content: messageContent.optional(),
    tool_call_id: z.string().optional(),
  })
  // A check on the payload, not superRefine: that attaches and deletes an addIssue closure on every
  // message's payload (a dictionary-mode object per message, on the hot path).
  .check((payload) => {
    const m = payload.value;
    if (m.content === undefined) {
      const hasCalls = m.role === 'assistant' && (m.tool_calls != null || m.function_call != null);
      if (!hasCalls) {
        payload.issues.push({
          code: 'invalid_type',
          expected: 'string',
          path: ['content'],
          input: undefined,
          continue: true,
          message:
            m.role === 'assistant'
              ? 'content is required for an assistant message without tool_calls or function_call'
              : `content is required for a ${m.role} message`,
        });
      }
    }
    if (m.role === 'tool' && m.tool_call_id === undefined) {
      payload.issues.push({
        code: 'invalid_type',
        expected: 'string',
        path: ['tool_call_id'],
        input: undefined,
        continue: true,
        message: 'tool_call_id is required for a tool message',
      });
    }
  });
export type ChatMessage = z.infer<typeof ChatMessage>;

export const ChatCompletionBody = z
  .looseObject(
    {
      model: z.string().min(1),
      messages: z.array(ChatMessage).min(1),
      temperature: temperature.nullable().optional(),
      top_p: topP.nullable().optional(),
      frequency_penalty: penalty.nullable().optional(),
      presence_penalty: penalty.nullable().optional(),
      n: nChoices.nullable().optional(),
      max_tokens: nonNegInt.nullable().optional(),
      max_completion_tokens: nonNegInt.nullable().optional(),
      logprobs: z.boolean().nullable().optional(),
      top_logprobs: z.int().min(0).max(20).nullable().optional(),
      stop: stop.nullable().optional(),
      logit_bias: logitBias.nullable().optional(),
      seed: seed.nullable().optional(),
      stream: z.boolean().nullable().optional(),
      stream_options: streamOptions.nullable().optional(),
      user: z.string().optional(),
      tools: z.array(z.looseObject({})).optional(),
      tool_choice: z
        .union([z.string(), z.looseObject({})], { error: 'tool_choice must be a string or an object' })
        .optional(),
      response_format: z.looseObject({ type: z.string() }).optional(),
    },
    { error: bodyObjectError },
  )
  .check(streamOptionsCheck());
export type ChatCompletionBody = z.infer<typeof ChatCompletionBody>;

// ---------------------------------------------------------------------------------------------
// POST /v1/completions (legacy) — every limit of OpenAI's completions request
// ---------------------------------------------------------------------------------------------

export const CompletionBody = z
  .looseObject(
    {
      model: z.string().min(1),
      // OpenAI's schema marks prompt nullable (null = the end-of-text default); the key is required.
      prompt: tokenInput('prompt', false).nullable(),
      best_of: z.int().min(0).max(20).nullable().optional(),
      echo: z.boolean().nullable().optional(),
      frequency_penalty: penalty.nullable().optional(),
      logit_bias: logitBias.nullable().optional(),
      logprobs: z.int().min(0).max(5).nullable().optional(),
      max_tokens: nonNegInt.nullable().optional(),
      n: nChoices.nullable().optional(),
      presence_penalty: penalty.nullable().optional(),
      seed: seed.nullable().optional(),
      stop: stop.nullable().optional(),
      stream: z.boolean().nullable().optional(),
      stream_options: streamOptions.nullable().optional(),
      suffix: z.string().nullable().optional(),
      temperature: temperature.nullable().optional(),
      top_p: topP.nullable().optional(),
      user: z.string().optional(),
    },
    { error: bodyObjectError },
  )
  .check(
    z.core._check<{ best_of?: number | null; n?: number | null; stream?: boolean | null }>(
      (ctx) => {
        const b = ctx.value;
        if (b.best_of != null && b.n != null && b.best_of <= b.n) {
          pushIssue(ctx, ['best_of'], `best_of (${b.best_of}) must be greater than n (${b.n})`, b.best_of);
        }
        // best_of 0/1 means one candidate per choice, which streams fine (and clients send it as a default).
        if (b.best_of != null && b.best_of > 1 && b.stream === true) {
          pushIssue(ctx, ['best_of'], 'best_of cannot be used with stream: true', b.best_of);
        }
      },
      { when: whenFieldsValid('best_of', 'n', 'stream') },
    ),
  )
  .check(streamOptionsCheck());
export type CompletionBody = z.infer<typeof CompletionBody>;

// ---------------------------------------------------------------------------------------------
// POST /v1/embeddings
// ---------------------------------------------------------------------------------------------

export const EmbeddingsBody = z.looseObject(
  {
    model: z.string().min(1),
    input: tokenInput('input', true),
    encoding_format: z.enum(['float', 'base64']).optional(),
    dimensions: z.int().min(1).optional(),
    user: z.string().optional(),
  },
  { error: bodyObjectError },
);
export type EmbeddingsBody = z.infer<typeof EmbeddingsBody>;

// ---------------------------------------------------------------------------------------------
// Entry point
// ---------------------------------------------------------------------------------------------

export type BodyEndpoint = 'chat' | 'completions' | 'embeddings';

export interface BodyFor {
  chat: ChatCompletionBody;
  completions: CompletionBody;
  embeddings: EmbeddingsBody;
}

export const BODY_SCHEMAS = {
  chat: ChatCompletionBody,
  completions: CompletionBody,
  embeddings: EmbeddingsBody,
} as const satisfies Record<BodyEndpoint, z.ZodType>;

/**
 * Validates a parsed JSON request body for `endpoint`. Returns the body with unknown fields intact,
 * or throws a 400 `invalid_request_body` GatewayError naming the first bad field.
 */
export function parseBody<E extends BodyEndpoint>(endpoint: E, body: unknown): BodyFor[E] {
  const schema: z.ZodType = BODY_SCHEMAS[endpoint];
  return parseOrThrow(schema, body, 'invalid_request_body', 'request body') as BodyFor[E];
}
