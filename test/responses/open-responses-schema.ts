/**
 * The Open Responses specification's response object and streaming events, as zod schemas written
 * from its OpenAPI document (components ResponseResource, ItemField, Tool, Usage, TextField, Reasoning
 * and the *StreamingEvent schemas): every field the specification requires, with its type. Objects
 * may carry more fields (OpenAI's do); a missing or mistyped required field fails. Not a test file.
 */
import { z } from 'zod';

const int = z.number().int();
const nullable = <T extends z.ZodType>(t: T) => t.nullable();

const messageStatus = z.enum(['in_progress', 'completed', 'incomplete']);
const logProb = z.object({ token: z.string(), logprob: z.number(), bytes: z.array(int), top_logprobs: z.array(z.unknown()) });

const urlCitation = z.object({ type: z.literal('url_citation'), url: z.string(), start_index: int, end_index: int, title: z.string() });

/** A content part of an item (ItemField's content parts: text, output text, summary, reasoning, refusal, image, file, video). */
export const contentPart = z.union([
  z.object({ type: z.literal('input_text'), text: z.string() }),
  z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(urlCitation), logprobs: z.array(logProb) }),
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('summary_text'), text: z.string() }),
  z.object({ type: z.literal('reasoning_text'), text: z.string() }),
  z.object({ type: z.literal('refusal'), refusal: z.string() }),
  z.object({ type: z.literal('input_image'), image_url: nullable(z.string()), detail: z.enum(['low', 'high', 'auto']) }),
  z.object({ type: z.literal('input_file'), filename: z.string().optional(), file_url: z.string().optional() }),
  z.object({ type: z.literal('input_video'), video_url: z.string() }),
]);

/** An item of `output` (ItemField): a message, a function call or its output, a reasoning item. */
export const itemField = z.discriminatedUnion('type', [
  z.object({ type: z.literal('message'), id: z.string(), status: messageStatus, role: z.enum(['user', 'assistant', 'system', 'developer']), content: z.array(contentPart) }),
  z.object({ type: z.literal('function_call'), id: z.string(), call_id: z.string(), name: z.string(), arguments: z.string(), status: messageStatus }),
  z.object({
    type: z.literal('function_call_output'),
    id: z.string(),
    call_id: z.string(),
    output: z.union([z.string(), z.array(contentPart)]),
    status: messageStatus,
  }),
  z.object({ type: z.literal('reasoning'), id: z.string(), summary: z.array(contentPart), content: z.array(contentPart).optional(), encrypted_content: z.string().optional() }),
]);

const functionTool = z.object({
  type: z.literal('function'),
  name: z.string(),
  description: nullable(z.string()),
  parameters: nullable(z.record(z.string(), z.unknown())),
  strict: nullable(z.boolean()),
});
const functionToolChoice = z.object({ type: z.literal('function'), name: z.string().optional() });
const toolChoice = z.union([
  functionToolChoice,
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('allowed_tools'), tools: z.array(functionToolChoice), mode: z.enum(['none', 'auto', 'required']) }),
]);
const textField = z.object({
  format: z.union([
    z.object({ type: z.literal('text') }),
    z.object({ type: z.literal('json_object') }),
    z.object({ type: z.literal('json_schema'), name: z.string() }),
  ]),
  verbosity: z.enum(['low', 'medium', 'high']).optional(),
});
const usage = z.object({
  input_tokens: int,
  output_tokens: int,
  total_tokens: int,
  input_tokens_details: z.object({ cached_tokens: int }),
  output_tokens_details: z.object({ reasoning_tokens: int }),
});

/** The response object (ResponseResource): its 31 required fields. */
export const responseResource = z.object({
  id: z.string(),
  object: z.literal('response'),
  created_at: int,
  completed_at: nullable(int),
  status: z.string(),
  incomplete_details: nullable(z.object({ reason: z.string() })),
  model: z.string(),
  previous_response_id: nullable(z.string()),
  instructions: nullable(z.string()),
  output: z.array(itemField),
  error: nullable(z.object({ code: z.string(), message: z.string() })),
  tools: z.array(functionTool),
  tool_choice: toolChoice,
  truncation: z.enum(['auto', 'disabled']),
  parallel_tool_calls: z.boolean(),
  text: textField,
  top_p: z.number(),
  presence_penalty: z.number(),
  frequency_penalty: z.number(),
  top_logprobs: int,
  temperature: z.number(),
  reasoning: nullable(z.object({ effort: nullable(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])), summary: nullable(z.enum(['concise', 'detailed', 'auto'])) })),
  usage: nullable(usage),
  max_output_tokens: nullable(int),
  max_tool_calls: nullable(int),
  store: z.boolean(),
  background: z.boolean(),
  service_tier: z.string(),
  metadata: z.unknown().refine((v) => v !== undefined, 'Required'),
  safety_identifier: nullable(z.string()),
  prompt_cache_key: nullable(z.string()),
});

const seq = { sequence_number: int };
const at = { ...seq, item_id: z.string(), output_index: int };
const lifecycle = <T extends string>(type: T) => z.object({ type: z.literal(type), ...seq, response: responseResource });

/**
 * Every streaming event of the specification. Its reasoning text events are named
 * `response.reasoning_text.*` in the specification's generated validators and OpenAI's API, and
 * `response.reasoning.*` in its OpenAPI document; both names are accepted.
 */
export const streamingEvent = z.discriminatedUnion('type', [
  lifecycle('response.created'),
  lifecycle('response.queued'),
  lifecycle('response.in_progress'),
  lifecycle('response.completed'),
  lifecycle('response.failed'),
  lifecycle('response.incomplete'),
  z.object({ type: z.literal('response.output_item.added'), ...seq, output_index: int, item: nullable(itemField) }),
  z.object({ type: z.literal('response.output_item.done'), ...seq, output_index: int, item: nullable(itemField) }),
  z.object({ type: z.literal('response.content_part.added'), ...at, content_index: int, part: contentPart }),
  z.object({ type: z.literal('response.content_part.done'), ...at, content_index: int, part: contentPart }),
  z.object({ type: z.literal('response.output_text.delta'), ...at, content_index: int, delta: z.string(), logprobs: z.array(logProb) }),
  z.object({ type: z.literal('response.output_text.done'), ...at, content_index: int, text: z.string(), logprobs: z.array(logProb) }),
  z.object({ type: z.literal('response.output_text.annotation.added'), ...at, content_index: int, annotation_index: int, annotation: nullable(urlCitation) }),
  z.object({ type: z.literal('response.refusal.delta'), ...at, content_index: int, delta: z.string() }),
  z.object({ type: z.literal('response.refusal.done'), ...at, content_index: int, refusal: z.string() }),
  z.object({ type: z.enum(['response.reasoning_text.delta', 'response.reasoning.delta']), ...at, content_index: int, delta: z.string() }),
  z.object({ type: z.enum(['response.reasoning_text.done', 'response.reasoning.done']), ...at, content_index: int, text: z.string() }),
  z.object({ type: z.literal('response.reasoning_summary_part.added'), ...at, summary_index: int, part: contentPart }),
  z.object({ type: z.literal('response.reasoning_summary_part.done'), ...at, summary_index: int, part: contentPart }),
  z.object({ type: z.literal('response.reasoning_summary_text.delta'), ...at, summary_index: int, delta: z.string() }),
  z.object({ type: z.literal('response.reasoning_summary_text.done'), ...at, summary_index: int, text: z.string() }),
  z.object({ type: z.literal('response.function_call_arguments.delta'), ...at, delta: z.string() }),
  z.object({ type: z.literal('response.function_call_arguments.done'), ...at, arguments: z.string() }),
  z.object({
    type: z.literal('error'),
    ...seq,
    error: z.object({ type: z.string(), code: nullable(z.string()), message: z.string(), param: nullable(z.string()) }),
  }),
]);

/** The issues of `value` against `schema`, one line each (`path: message`); empty when it conforms. */
export function violations(schema: z.ZodType, value: unknown): string[] {
  const r = schema.safeParse(value);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
}
