/**
 * The stored response object, as the Responses API has it: its required fields with their defaults
 * (taken from the request where it set them), the request's input as items with ids, and fresh ids.
 * Pure functions; the recorder (src/operators/record-response.ts) and the background runs use them.
 */
import { randomBytes } from 'node:crypto';
import { echoedFields } from '../providers/bridges/responses-object.js';

type Obj = Record<string, unknown>;

/** A fresh id with the API's prefix (`resp_`, `msg_`, ...): 48 hex digits, as OpenAI's. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

/**
 * `response` (an answer's, or a snapshot of one) with every required field present: the answer's
 * own values first, the request's (or the defaults) where it has none. `previous_response_id` and
 * `background` are the client's request's: the gateway rebuilt the conversation and ran it detached,
 * so the upstream never saw them.
 */
export function completeResponse(response: Obj, body: Obj, id: string, createdAt: number): Obj {
  const r: Obj = {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    completed_at: null,
    model: body.model,
    output: [],
    usage: null,
    ...echoedFields(body),
  };
  for (const [k, v] of Object.entries(response)) if (v !== undefined && v !== null) r[k] = v;
  r.id = id;
  r.previous_response_id = body.previous_response_id ?? null;
  r.background = body.background === true;
  return r;
}

/** A message's content as items (a string is one text part of the role's kind). */
function contentItems(role: unknown, content: unknown): unknown {
  if (typeof content !== 'string') return content;
  return [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: content, ...(role === 'assistant' ? { annotations: [] } : {}) }];
}

/**
 * The request's `input` as the input items GET .../input_items lists: a string is one user message;
 * each item keeps its id or gets one (`msg_` for messages, else `item_`), and a message's string
 * content becomes one text part.
 */
export function inputItems(input: unknown): Obj[] {
  if (typeof input === 'string') return [{ id: newId('msg'), type: 'message', role: 'user', content: contentItems('user', input) }];
  if (!Array.isArray(input)) return [];
  return input.map((raw) => {
    const item = (raw ?? {}) as Obj;
    const isMessage = item.type === 'message' || (item.type === undefined && 'role' in item);
    const out: Obj = { id: typeof item.id === 'string' ? item.id : newId(isMessage ? 'msg' : 'item'), ...item };
    if (isMessage) {
      out.type = 'message';
      out.content = contentItems(item.role, item.content);
    }
    return out;
  });
}

/** An output item, as the next turn's input (a message keeps role and content; a call stays a call). */
export function asInput(item: Obj): Obj {
  if (item.type !== 'message') return item;
  return { type: 'message', role: item.role ?? 'assistant', content: item.content };
}
