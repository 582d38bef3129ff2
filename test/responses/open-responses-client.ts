/**
 * The Open Responses compliance cases, and the checks the specification's compliance suite applies,
 * as a client sends them to the gateway's POST /v1/responses with plain fetch (a JSON body, or a
 * stream read as SSE frames). Not a test file.
 */
import { parseSse } from '../helpers/sse.js';
import { responseResource, streamingEvent, violations } from './open-responses-schema.js';

type Json = Record<string, any>;

export const IMAGE_URL = 'https://images.example/logo.png';

export const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'The current weather of a place',
  parameters: { type: 'object', properties: { location: { type: 'string', description: 'A city' } }, required: ['location'] },
};

/** The requests of the compliance cases (each with `model` added by the caller). */
export const CASES = {
  basic: { input: [{ type: 'message', role: 'user', content: 'Greet me in three words.' }] },
  streaming: { input: [{ type: 'message', role: 'user', content: 'Count to five.' }] },
  systemPrompt: {
    input: [
      { type: 'message', role: 'system', content: 'Answer like a pirate.' },
      { type: 'message', role: 'user', content: 'Greet me.' },
    ],
  },
  tools: { input: [{ type: 'message', role: 'user', content: 'What is the weather in Lisbon?' }], tools: [WEATHER_TOOL] },
  image: {
    input: [
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is in this picture?' },
          { type: 'input_image', image_url: IMAGE_URL },
        ],
      },
    ],
  },
  multiTurn: {
    input: [
      { type: 'message', role: 'user', content: 'I am Bea.' },
      { type: 'message', role: 'assistant', content: 'Hello Bea, how can I help?' },
      { type: 'message', role: 'user', content: 'Who am I?' },
    ],
  },
} satisfies Record<string, Json>;

/** Who answers: the gateway, which provider, its host and its key. */
export interface Target {
  url: string;
  gatewayKey: string;
  provider: string;
  host: string;
  /** More request headers (a gateway config, say). */
  headers?: Record<string, string>;
}

function headers(t: Target): Record<string, string> {
  return {
    'content-type': 'application/json',
    authorization: 'Bearer sk-upstream',
    'x-gateway-api-key': t.gatewayKey,
    'x-gateway-provider': t.provider,
    'x-gateway-custom-host': t.host,
    ...t.headers,
  };
}

/** A JSON request: the HTTP status and the parsed body. */
export async function create(t: Target, body: Json): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${t.url}/v1/responses`, { method: 'POST', headers: headers(t), body: JSON.stringify({ ...body, stream: false }) });
  return { status: res.status, body: (await res.json()) as Json };
}

export interface StreamResult {
  status: number;
  /** The SSE event name of each frame. */
  names: (string | undefined)[];
  events: Json[];
  /** The response of the closing event (`response.completed`, `.incomplete` or `.failed`), if any. */
  final?: Json;
}

/** A streamed request: its frames parsed, each data line as one event. */
export async function stream(t: Target, body: Json): Promise<StreamResult> {
  const res = await fetch(`${t.url}/v1/responses`, { method: 'POST', headers: headers(t), body: JSON.stringify({ ...body, stream: true }) });
  const frames = parseSse(await res.text());
  const events = frames.map((f) => JSON.parse(f.data) as Json);
  const closing = events.find((e) => ['response.completed', 'response.incomplete', 'response.failed'].includes(e.type));
  return { status: res.status, names: frames.map((f) => f.event), events, final: closing?.response };
}

/** What the suite checks of a response object: it conforms, it has output, and (unless told) it completed. */
export function responseErrors(r: Json | undefined, opts: { status?: string } = {}): string[] {
  if (!r) return ['no response object'];
  const errors = violations(responseResource, r);
  if (!Array.isArray(r.output) || r.output.length === 0) errors.push('the response has no output items');
  const status = opts.status ?? 'completed';
  if (r.status !== status) errors.push(`status ${String(r.status)}, not ${status}`);
  return errors;
}

/**
 * What the suite (and the specification's streaming rules) check of a stream: every event conforms
 * to its schema and is named by its type; sequence numbers count up from 0 by one; it opens with
 * `response.created` then `response.in_progress` and closes with one terminal event (or, cut short,
 * with one `error` event); every item added is done, at the index it was added; the text deltas add
 * up to the done text.
 */
export function streamErrors(s: StreamResult, opts: { endsWithError?: boolean } = {}): string[] {
  const errors: string[] = [];
  if (s.events.length === 0) return ['no events'];
  s.events.forEach((e, i) => {
    for (const v of violations(streamingEvent, e)) errors.push(`event ${i} (${String(e.type)}): ${v}`);
    if (s.names[i] !== e.type) errors.push(`event ${i}: named ${String(s.names[i])}, its type is ${String(e.type)}`);
    if (e.sequence_number !== i) errors.push(`event ${i}: sequence_number ${String(e.sequence_number)}`);
  });
  const types = s.events.map((e) => e.type as string);
  if (types[0] !== 'response.created' || types[1] !== 'response.in_progress') errors.push(`opens with ${types.slice(0, 2).join(', ')}`);
  const terminal = types.filter((t) => ['response.completed', 'response.incomplete', 'response.failed'].includes(t));
  if (opts.endsWithError) {
    // A stream cut short: no terminal response event, one `error` event last.
    if (terminal.length > 0 || types.at(-1) !== 'error' || types.indexOf('error') !== types.length - 1) errors.push(`closes with ${types.at(-1)}`);
    return errors;
  }
  if (terminal.length !== 1 || !terminal.includes(types.at(-1)!)) errors.push(`closes with ${types.at(-1)}; terminal events: ${terminal.join(', ')}`);
  errors.push(...itemErrors(s.events));
  return errors;
}

function itemErrors(events: Json[]): string[] {
  const errors: string[] = [];
  const added = new Map<number, Json>();
  const texts = new Map<string, string>();
  for (const e of events) {
    if (e.type === 'response.output_item.added') added.set(e.output_index, e.item);
    if (e.type === 'response.output_text.delta') texts.set(e.item_id, (texts.get(e.item_id) ?? '') + e.delta);
    if (e.type === 'response.output_text.done' && (texts.get(e.item_id) ?? '') !== e.text) errors.push(`item ${e.item_id}: deltas do not add up to its text`);
    if (e.type === 'response.output_item.done') {
      const a = added.get(e.output_index);
      if (!a || a.id !== e.item.id) errors.push(`output_item.done at ${e.output_index} without its added event`);
      added.delete(e.output_index);
    }
  }
  for (const i of added.keys()) errors.push(`output item ${i} never done`);
  return errors;
}
