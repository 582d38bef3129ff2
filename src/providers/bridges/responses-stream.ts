/**
 * A chat completions stream → the Responses API's stream events: `response.created` and
 * `response.in_progress` first, each output item opened (`output_item.added`), filled
 * (`output_text.delta`, `function_call_arguments.delta`) and closed (`.done` events), and the
 * response object last in `response.completed` (or `response.incomplete`). Every event carries its
 * `type` (also its SSE event name) and a `sequence_number`. A pure reducer over one stream's state.
 */
import { readChatChunk } from './bridge.js';
import type { StreamChunk, StreamStep, Usage } from '../types.js';
import { functionCallItem, messageItem, newId, reasoningItem, reasoningText, responseObject, responsesUsage, statusOf } from './responses-object.js';

type Json = Record<string, unknown>;

interface OpenText {
  kind: 'text';
  id: string;
  index: number;
  text: string;
}
interface OpenReasoning {
  kind: 'reasoning';
  id: string;
  index: number;
  text: string;
}
interface OpenCall {
  kind: 'call';
  id: string;
  index: number;
  /** The chat tool call's index, which its later argument deltas name. */
  chatIndex: number;
  callId: unknown;
  name: unknown;
  args: string;
}

export interface ResponsesStreamState {
  body: Json;
  id: string;
  createdAt: number;
  model: unknown;
  seq: number;
  started: boolean;
  /** The item being filled, if any; items before it are done and in `output`. */
  open?: OpenText | OpenReasoning | OpenCall;
  output: Json[];
  finish?: unknown;
  usage?: Usage;
  usageBody?: unknown;
}

export function responsesStreamStart(body: Json, now: number): ResponsesStreamState {
  return { body, id: newId('resp'), createdAt: Math.floor(now / 1000), model: body.model, seq: 0, started: false, output: [] };
}

/** The state's events so far, a chunk each, in the order they are made; the state itself is mutated (one stream's own). */
class Emitter {
  readonly chunks: StreamChunk[] = [];
  constructor(readonly s: ResponsesStreamState) {}

  emit(type: string, fields: Json, usage?: Usage): void {
    const data = JSON.stringify({ type, sequence_number: this.s.seq++, ...fields });
    this.chunks.push(usage ? { data, event: type, usage } : { data, event: type });
  }

  response(status: Parameters<typeof responseObject>[1]['status'], details?: { reason: string } | null): Json {
    const s = this.s;
    const usage = responsesUsage(s.usageBody);
    const completed_at = status === 'in_progress' ? null : Math.floor(Date.now() / 1000);
    return responseObject(s.body, { id: s.id, created_at: s.createdAt, completed_at, model: s.model, status, incomplete_details: details, output: s.output, usage });
  }

  start(): void {
    if (this.s.started) return;
    this.s.started = true;
    const response = this.response('in_progress');
    this.emit('response.created', { response });
    this.emit('response.in_progress', { response });
  }

  /** Closes the open item: its `.done` events, then it joins the output. */
  close(): void {
    const o = this.s.open;
    if (!o) return;
    this.s.open = undefined;
    if (o.kind === 'reasoning') return this.closeReasoning(o);
    if (o.kind === 'text') {
      const at = { item_id: o.id, output_index: o.index, content_index: 0 };
      this.emit('response.output_text.done', { ...at, text: o.text, logprobs: [] });
      this.emit('response.content_part.done', { ...at, part: { type: 'output_text', text: o.text, annotations: [], logprobs: [] } });
      const item = messageItem(o.id, o.text, 'completed');
      this.s.output.push(item);
      this.emit('response.output_item.done', { output_index: o.index, item });
      return;
    }
    this.emit('response.function_call_arguments.done', { item_id: o.id, output_index: o.index, name: o.name, arguments: o.args });
    const item = functionCallItem(o.id, o.callId, o.name, o.args, 'completed');
    this.s.output.push(item);
    this.emit('response.output_item.done', { output_index: o.index, item });
  }

  private closeReasoning(o: OpenReasoning): void {
    const at = { item_id: o.id, output_index: o.index, content_index: 0 };
    this.emit('response.reasoning_text.done', { ...at, text: o.text });
    this.emit('response.content_part.done', { ...at, part: { type: 'reasoning_text', text: o.text } });
    const item = reasoningItem(o.id, o.text, 'completed');
    this.s.output.push(item);
    this.emit('response.output_item.done', { output_index: o.index, item });
  }

  /** Reasoning text: a reasoning item with one `reasoning_text` part, filled by `response.reasoning_text.delta`. */
  reasoning(delta: string): void {
    let o = this.s.open;
    if (o?.kind !== 'reasoning') {
      this.close();
      o = this.s.open = { kind: 'reasoning', id: newId('rs'), index: this.s.output.length, text: '' };
      this.emit('response.output_item.added', { output_index: o.index, item: { ...reasoningItem(o.id, '', 'in_progress'), content: [] } });
      this.emit('response.content_part.added', { item_id: o.id, output_index: o.index, content_index: 0, part: { type: 'reasoning_text', text: '' } });
    }
    o.text += delta;
    this.emit('response.reasoning_text.delta', { item_id: o.id, output_index: o.index, content_index: 0, delta });
  }

  text(delta: string): void {
    let o = this.s.open;
    if (o?.kind !== 'text') {
      this.close();
      o = this.s.open = { kind: 'text', id: newId('msg'), index: this.s.output.length, text: '' };
      this.emit('response.output_item.added', { output_index: o.index, item: messageItem(o.id, '', 'in_progress') });
      this.emit('response.content_part.added', { item_id: o.id, output_index: o.index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
    }
    if (delta === '') return;
    o.text += delta;
    this.emit('response.output_text.delta', { item_id: o.id, output_index: o.index, content_index: 0, delta, logprobs: [] });
  }

  call(tc: Json): void {
    const chatIndex = typeof tc.index === 'number' ? tc.index : 0;
    const fn = (tc.function ?? {}) as Json;
    let o = this.s.open;
    if (o?.kind !== 'call' || o.chatIndex !== chatIndex) {
      this.close();
      o = this.s.open = { kind: 'call', id: newId('fc'), index: this.s.output.length, chatIndex, callId: tc.id, name: fn.name, args: '' };
      this.emit('response.output_item.added', { output_index: o.index, item: functionCallItem(o.id, o.callId, o.name, '', 'in_progress') });
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      o.args += fn.arguments;
      this.emit('response.function_call_arguments.delta', { item_id: o.id, output_index: o.index, delta: fn.arguments });
    }
  }
}

/** One chat chunk (its JSON text; empty for a usage the provider's translation kept to itself) → events. */
export function responsesChunk(state: ResponsesStreamState, chunk: StreamChunk): StreamStep<ResponsesStreamState> {
  const e = new Emitter(state);
  const parsed = readChatChunk(state, chunk);
  if (!parsed) return { state, chunks: e.chunks };
  if (typeof parsed.model === 'string') state.model = parsed.model;
  e.start();
  const choice = (parsed.choices as Json[] | undefined)?.[0];
  const delta = (choice?.delta ?? {}) as Json;
  const reasoning = reasoningText(delta);
  if (reasoning !== undefined) e.reasoning(reasoning);
  if (typeof delta.content === 'string' && delta.content !== '') e.text(delta.content);
  for (const tc of (delta.tool_calls as Json[] | undefined) ?? []) e.call(tc);
  if (choice?.finish_reason) state.finish = choice.finish_reason;
  return { state, chunks: e.chunks };
}

/** The chat stream ended: the open item closed, then the response object in `response.completed` (or `.incomplete`) with the usage. */
export function responsesStreamEnd(state: ResponsesStreamState): StreamChunk[] {
  const e = new Emitter(state);
  e.start();
  e.close();
  if (!state.output.some((i) => i.type !== 'reasoning')) {
    // An answer without content still has its (empty) message, as a JSON answer has.
    e.text('');
    e.close();
  }
  if (state.usageBody === undefined && state.usage) state.usageBody = state.usage;
  const { status, incomplete_details } = statusOf(state.finish);
  const response = e.response(status, incomplete_details);
  e.emit(status === 'completed' ? 'response.completed' : 'response.incomplete', { response }, state.usage);
  return e.chunks;
}
