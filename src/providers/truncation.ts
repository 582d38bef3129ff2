/**
 * The Responses API's `truncation: "auto"` as a pure function over input items and their token
 * counts: which items stay when the input does not fit. What is counted and when it runs is
 * src/providers/context-fit.ts.
 */

type Obj = Record<string, unknown>;

const isInstruction = (item: unknown): boolean => {
  const role = (item as Obj | null)?.role;
  return role === 'system' || role === 'developer';
};

const callIdOf = (item: unknown, type: string): string | undefined => {
  const it = item as Obj | null;
  return it?.type === type && typeof it.call_id === 'string' ? it.call_id : undefined;
};

/**
 * The first index of the unit each item belongs to: a function call, its output and every item
 * between them are one unit, dropped or kept whole (a provider refuses an output without its call,
 * and a call without its output before the next turn).
 */
export function unitStarts(items: readonly unknown[]): number[] {
  const start = items.map((_, i) => i);
  const callAt = new Map<string, number>();
  items.forEach((item, i) => {
    const call = callIdOf(item, 'function_call');
    if (call !== undefined && !callAt.has(call)) callAt.set(call, i);
    const output = callIdOf(item, 'function_call_output');
    const from = output === undefined ? undefined : callAt.get(output);
    if (from === undefined) return;
    // every item from the call to its output joins the unit the call is in
    const s = start[from]!;
    for (let j = from; j <= i; j++) start[j] = Math.min(start[j]!, s);
  });
  // a unit that began inside another one (an earlier call answered later) joins that one
  for (let i = items.length - 2; i >= 0; i--) if (start[i + 1]! <= i) start[i] = Math.min(start[i]!, start[i + 1]!);
  return start;
}

/** What truncation kept: the items in their order, and how many tokens they take. */
export interface Truncated {
  items: unknown[];
  tokens: number;
}

/**
 * The items that fit in `budget` tokens (`costs[i]` is item i's): the first system or developer item,
 * then the latest items, whole units only, as many as fit from the newest back; the items between
 * them are dropped. Undefined when even the first instruction item and the newest unit do not fit.
 */
export function truncateItems(items: readonly unknown[], costs: readonly number[], budget: number): Truncated | undefined {
  const first = items.findIndex(isInstruction);
  const starts = unitStarts(items);
  let tokens = first >= 0 ? costs[first]! : 0;
  let from = items.length;
  while (from > 0) {
    const start = starts[from - 1]!;
    let unit = 0;
    for (let i = start; i < from; i++) if (i !== first) unit += costs[i]!;
    if (tokens + unit > budget) break;
    tokens += unit;
    from = start;
  }
  if (from === items.length || tokens > budget) return undefined;
  const kept = items.slice(from);
  if (first >= 0 && first < from) kept.unshift(items[first]);
  return { items: kept, tokens };
}
