import { z } from 'zod';
import { bodyObjectError, pushIssue, whenFieldsValid } from '../config/body-checks.js';
import { parseOrThrow } from '../config/issues.js';
import type { ProviderRequest } from '../providers/types.js';
import { SSE_HEADERS, sseData, sseEvent } from '../upstream/sse-encode.js';
import { OPENAI_FRAMING } from './openai.js';
import type { Framing, IngressFormat } from './types.js';

/** Metadata of a response: at most 16 pairs, keys of at most 64 characters, string values of at most 512. */
export const RESPONSE_METADATA_LIMITS = { pairs: 16, key: 64, value: 512 } as const;

const metadata = z
  .record(z.string().max(RESPONSE_METADATA_LIMITS.key), z.string().max(RESPONSE_METADATA_LIMITS.value))
  .refine((m) => Object.keys(m).length <= RESPONSE_METADATA_LIMITS.pairs, {
    message: `metadata has at most ${RESPONSE_METADATA_LIMITS.pairs} key-value pairs`,
  });

/** An input item: a message (role and content) or another item named by its `type` (function_call, function_call_output, ...). */
const inputItem = z.looseObject({ type: z.string().optional(), role: z.string().optional() }).check(
  z.core._check<{ type?: string; role?: string; content?: unknown }>((ctx) => {
    const it = ctx.value;
    if (it.type === undefined && it.role === undefined) pushIssue(ctx, ['type'], 'an input item has a type or a role', it.type);
    else if ((it.type === undefined || it.type === 'message') && it.content === undefined) pushIssue(ctx, ['content'], 'a message item has content', it.content);
  }, { when: whenFieldsValid('type', 'role') }),
);

/**
 * OpenAI's Responses request body: the fields the gateway reads are checked (limits of the stored
 * response object), every other field is passed on as it came.
 */
export const ResponsesBody = z.looseObject(
  {
    model: z.string().min(1),
    input: z.union([z.string(), z.array(inputItem)], { error: 'input must be a string or an array of input items' }).optional(),
    instructions: z.string().nullable().optional(),
    previous_response_id: z.string().min(1).nullable().optional(),
    tools: z.array(z.looseObject({ type: z.string() })).optional(),
    tool_choice: z.union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.string() })], {
      error: 'tool_choice must be none, auto, required or a tool choice object',
    }).optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_output_tokens: z.int().min(1).nullable().optional(),
    metadata: metadata.nullable().optional(),
    truncation: z.enum(['auto', 'disabled']).nullable().optional(),
    store: z.boolean().nullable().optional(),
    stream: z.boolean().nullable().optional(),
    background: z.boolean().nullable().optional(),
    text: z.looseObject({ format: z.looseObject({ type: z.string() }).optional() }).nullable().optional(),
    reasoning: z.looseObject({}).nullable().optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    user: z.string().optional(),
  },
  { error: bodyObjectError },
);
export type ResponsesBody = z.infer<typeof ResponsesBody>;

/** The `type` an event's JSON starts with (as the gateway's and OpenAI's do), for chunks replayed without their name. */
const LEADING_TYPE = /^\{"type":"([^"]+)"/;

/**
 * The Responses API's stream framing: each event as `event: <type>` and its `data:`, no `[DONE]`
 * (the stream ends after `response.completed`, `response.incomplete` or `response.failed`). Errors
 * are OpenAI's envelope before the stream, an `event: error` frame after it: the envelope with the
 * event's `type` (`error`) and its `sequence_number` (the next after the events sent), as the Open
 * Responses specification has the error event.
 */
export const RESPONSES_FRAMING: Framing = {
  ...OPENAI_FRAMING,
  streamHeaders: SSE_HEADERS,
  chunk: (data, event) => {
    const name = event ?? LEADING_TYPE.exec(data)?.[1];
    return name === undefined ? sseData(data) : sseEvent(data, name);
  },
  end: '',
  streamError: (body, sent) => sseEvent(JSON.stringify({ type: 'error', sequence_number: sent, ...body }), 'error'),
};

/** OpenAI's Responses API: POST /v1/responses, JSON or a stream of named events. */
export const RESPONSES: IngressFormat = {
  id: 'responses',
  endpoint: 'responses',
  routes: [{ method: 'POST', path: '/v1/responses' }],
  hasBody: true,
  parse: (raw) => parseOrThrow(ResponsesBody, raw, 'invalid_request_body', 'request body') as Record<string, unknown>,
  toRequest: (body, headers): ProviderRequest => ({ endpoint: 'responses', body, stream: body?.stream === true, headers }),
  framing: RESPONSES_FRAMING,
};
