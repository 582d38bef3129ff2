/**
 * The Responses API's truncation rule, applied per target before its request is translated (the
 * model, and so its window and tokenizer, is the target's: override_params may change it). The
 * input, as the stored-responses stage rebuilt it from `previous_response_id`, plus the
 * instructions, tools and text format, must fit in the model's context window less
 * `max_output_tokens`:
 *
 * - `truncation: "auto"` drops input items from the middle of the conversation (the first system or
 *   developer item and the latest items kept, a function call never parted from its output) until
 *   it fits (src/providers/truncation.ts); when even that does not fit, 400.
 * - `disabled` (the default): 400 `context_length_exceeded` naming `input`.
 *
 * Either 400 is found before any call, so a fallback passes the target over (a refusal,
 * src/errors/cannot-serve.ts) and may reach a model with a larger window. A model without a window
 * (not in the table, no `*` entry; src/pricing/context-windows.ts) is not checked.
 */
import { GatewayError } from '../errors/gateway-error.js';
import type { ContextWindows } from '../pricing/context-windows.js';
import { counterFor, encodingFor, fixedTokens, itemTokens, utf8Bytes, type Counter } from '../pricing/input-tokens.js';
import { truncateItems } from './truncation.js';

type Obj = Record<string, unknown>;

/** The body with its input truncated, and the change said as `input=<items before>-><items after>`. */
export interface Fitted {
  body: Obj;
  said: string;
}

function itemsOf(input: unknown): unknown[] {
  if (Array.isArray(input)) return input;
  return typeof input === 'string' ? [{ role: 'user', content: input }] : [];
}

/** The items' counts, newest first (the tokenizer's bounded reading goes to what truncation keeps). */
function countItems(items: readonly unknown[], count: Counter): { costs: number[]; total: number } {
  const costs = new Array<number>(items.length);
  let total = 0;
  for (let i = items.length - 1; i >= 0; i--) total += costs[i] = itemTokens(items[i], count);
  return { costs, total };
}

/** A request's count by one way of counting (an encoding, or the estimate). */
interface Counted {
  kind: string;
  /** What the fixed part was counted from (a target's override_params may change it). */
  of: readonly unknown[];
  fixed: number;
  costs: number[];
  total: number;
}

/**
 * Counts kept on the input array they were made from: a retry, or the next target of a fallback
 * counted the same way, does not tokenize the input again.
 */
const counted = new WeakMap<object, Counted[]>();

function countRequest(body: Obj, items: readonly unknown[], model: string): Counted {
  const kind = encodingFor(model) ?? 'estimate';
  const of = [body.instructions, body.tools, body.text];
  const holder = Array.isArray(body.input) ? (body.input as object) : undefined;
  const kept = holder && counted.get(holder);
  const hit = kept?.find((c) => c.kind === kind && c.of.every((v, i) => v === of[i]));
  if (hit) return hit;
  const count = counterFor(model);
  // items first: the tokenizer's bounded reading goes to the newest items, which truncation keeps
  const { costs, total } = countItems(items, count);
  const c: Counted = { kind, of, fixed: fixedTokens(body, count), costs, total };
  if (holder) counted.set(holder, [...(kept ?? []), c]);
  return c;
}

function tooLong(message: string): GatewayError {
  return new GatewayError('context_length_exceeded', `input: ${message}`, { param: 'input' });
}

/**
 * `body` fitted to its model's window: undefined when it fits as it is (or the model has no window),
 * the truncated body with `truncation: "auto"`; throws a 400 `context_length_exceeded` otherwise.
 */
export function fitContext(body: Obj, windows: ContextWindows): Fitted | undefined {
  if (typeof body.model !== 'string') return undefined;
  const window = windows.lookup(body.model);
  if (window === undefined) return undefined;
  const reserved = typeof body.max_output_tokens === 'number' ? body.max_output_tokens : 0;
  const budget = window - reserved;
  const items = itemsOf(body.input);
  if (fixedTokens(body, utf8Bytes) + countItems(items, utf8Bytes).total <= budget) return undefined;
  const { fixed, costs, total } = countRequest(body, items, body.model);
  if (fixed + total <= budget) return undefined;
  const what = `model ${body.model} has a context window of ${window} tokens`;
  const less = reserved > 0 ? `, of which max_output_tokens keeps ${reserved} for the answer` : '';
  if (body.truncation !== 'auto' || !Array.isArray(body.input)) {
    const hint = body.truncation === 'auto' ? 'shorten it' : 'send truncation: "auto" to drop items from the middle of the conversation, or shorten it';
    throw tooLong(`the input takes about ${fixed + total} tokens; ${what}${less}. ${hint}.`);
  }
  const kept = truncateItems(items, costs, budget - fixed);
  if (!kept) {
    throw tooLong(`with truncation "auto", the first system or developer item and the latest item still take more than the ${budget - fixed} tokens left; ${what}${less}.`);
  }
  return { body: { ...body, input: kept.items }, said: `input=${items.length}->${kept.items.length}` };
}
