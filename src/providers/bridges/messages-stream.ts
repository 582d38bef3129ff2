/**
 * A chat completions stream → Anthropic's stream events, in Anthropic's order: `message_start`
 * first; each content block opened (`content_block_start`), filled (`content_block_delta`:
 * `text_delta`, `input_json_delta`) and closed (`content_block_stop`) before the next opens;
 * `message_delta` with the stop reason and the usage; `message_stop` last. Each event is written with
 * its `type` as its SSE event name. A pure reducer over one stream's state.
 */
import { readChatChunk } from './bridge.js';
import type { StreamChunk, StreamStep, Usage } from '../types.js';
import { matchedStop, messagesUsage, stopReason } from './messages-answer.js';
import { newId } from './responses-object.js';

type Json = Record<string, unknown>;

type OpenBlock = { kind: 'text'; index: number } | { kind: 'tool'; index: number; chatIndex: number };

export interface MessagesStreamState {
  id: string;
  model: unknown;
  /** The request's stop_sequences, to name the one a provider says it stopped at. */
  stops: unknown;
  started: boolean;
  /** The index the next block gets. */
  next: number;
  /** The block being filled, if any. */
  open?: OpenBlock;
  finish?: unknown;
  stop: string | null;
  calls: boolean;
  refused: boolean;
  /** The gateway's usage, for accounting (the chunk's). */
  usage?: Usage;
  /** The chat usage object as the provider sent it (its cache details). */
  usageBody?: unknown;
}

export function messagesStreamStart(body: Json): MessagesStreamState {
  return { id: newId('msg'), model: body.model, stops: body.stop_sequences, started: false, next: 0, stop: null, calls: false, refused: false };
}

/** One stream's events, a chunk each, in the order they are made; the state is the stream's own and is mutated. */
class Emitter {
  readonly chunks: StreamChunk[] = [];
  constructor(readonly s: MessagesStreamState) {}

  emit(type: string, fields: Json = {}, usage?: Usage): void {
    const data = JSON.stringify({ type, ...fields });
    this.chunks.push(usage ? { data, event: type, usage } : { data, event: type });
  }

  start(): void {
    if (this.s.started) return;
    this.s.started = true;
    // Chat streams report usage at their end: message_start has zeros, message_delta the counts.
    const usage = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
    this.emit('message_start', { message: { id: this.s.id, type: 'message', role: 'assistant', model: this.s.model, content: [], stop_reason: null, stop_sequence: null, usage } });
  }

  close(): void {
    const o = this.s.open;
    if (!o) return;
    this.s.open = undefined;
    this.emit('content_block_stop', { index: o.index });
  }

  open(block: OpenBlock, contentBlock: Json): void {
    this.close();
    this.s.open = block;
    this.s.next++;
    this.emit('content_block_start', { index: block.index, content_block: contentBlock });
  }

  text(delta: string): void {
    if (this.s.open?.kind !== 'text') this.open({ kind: 'text', index: this.s.next }, { type: 'text', text: '' });
    this.emit('content_block_delta', { index: this.s.open!.index, delta: { type: 'text_delta', text: delta } });
  }

  call(tc: Json): void {
    const chatIndex = typeof tc.index === 'number' ? tc.index : 0;
    const fn = (tc.function ?? {}) as Json;
    const o = this.s.open;
    if (o?.kind !== 'tool' || o.chatIndex !== chatIndex) {
      this.s.calls = true;
      this.open({ kind: 'tool', index: this.s.next, chatIndex }, { type: 'tool_use', id: tc.id, name: fn.name, input: {} });
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      this.emit('content_block_delta', { index: this.s.open!.index, delta: { type: 'input_json_delta', partial_json: fn.arguments } });
    }
  }
}

/** One chat chunk (its JSON text; empty for a usage the provider's translation kept to itself) → events. */
export function messagesChunk(state: MessagesStreamState, chunk: StreamChunk): StreamStep<MessagesStreamState> {
  const e = new Emitter(state);
  const parsed = readChatChunk(state, chunk);
  if (!parsed) return { state, chunks: e.chunks };
  if (typeof parsed.model === 'string' && parsed.model !== '' && !state.started) state.model = parsed.model;
  const choice = (parsed.choices as Json[] | undefined)?.[0];
  // A chunk without a choice (Azure's prompt-filter chunk, a usage chunk) starts nothing: message_start
  // waits for the first choice, which names the model.
  if (choice) e.start();
  const delta = (choice?.delta ?? {}) as Json;
  if (typeof delta.content === 'string' && delta.content !== '') e.text(delta.content);
  if (typeof delta.refusal === 'string' && delta.refusal !== '') {
    state.refused = true;
    e.text(delta.refusal);
  }
  for (const tc of (delta.tool_calls as Json[] | undefined) ?? []) e.call(tc);
  if (choice?.finish_reason) {
    state.finish = choice.finish_reason;
    state.stop = matchedStop(choice, state.stops);
  }
  return { state, chunks: e.chunks };
}

/** The chat stream ended: the open block closed, then message_delta (stop reason, usage; the gateway's usage on its chunk) and message_stop. */
export function messagesStreamEnd(state: MessagesStreamState): StreamChunk[] {
  const e = new Emitter(state);
  e.start();
  e.close();
  const reason = stopReason(state.finish, { calls: state.calls, refused: state.refused, stop: state.stop });
  const usage = messagesUsage(state.usageBody ?? state.usage);
  e.emit('message_delta', { delta: { stop_reason: reason, stop_sequence: reason === 'stop_sequence' ? state.stop : null }, usage }, state.usage);
  e.emit('message_stop');
  return e.chunks;
}
