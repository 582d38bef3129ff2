/**
 * The Responses API's half of src/cache/assemble.ts: a stream of its events as the response object,
 * and a response object as the events a stream of it would have carried (each item's content whole).
 */
type Json = Record<string, any>;

/** The events whose `response` is the final object. */
const FINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** The response of the stream's final event (else of its last event that carries one). */
export function responsesChunksToJson(chunks: readonly Json[]): Json {
  let last: Json = {};
  for (const c of chunks) {
    if (!c?.response) continue;
    last = c.response;
    if (FINAL.has(c.type)) return last;
  }
  return last;
}

/** One output item's events, from `output_item.added` to `output_item.done`. */
function itemEvents(item: Json, index: number): Json[] {
  const at = { item_id: item.id, output_index: index };
  const out: Json[] = [];
  if (item.type === 'message') {
    out.push({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', content: [] } });
    (item.content as Json[] | undefined)?.forEach((part, i) => {
      const p = { ...at, content_index: i };
      out.push({ type: 'response.content_part.added', ...p, part: part.type === 'output_text' ? { ...part, text: '' } : part });
      if (part.type === 'output_text') {
        out.push({ type: 'response.output_text.delta', ...p, delta: part.text, logprobs: [] });
        out.push({ type: 'response.output_text.done', ...p, text: part.text, logprobs: [] });
      }
      out.push({ type: 'response.content_part.done', ...p, part });
    });
  } else if (item.type === 'function_call') {
    out.push({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
    out.push({ type: 'response.function_call_arguments.delta', ...at, delta: item.arguments });
    out.push({ type: 'response.function_call_arguments.done', ...at, name: item.name, arguments: item.arguments });
  } else {
    out.push({ type: 'response.output_item.added', output_index: index, item });
  }
  out.push({ type: 'response.output_item.done', output_index: index, item });
  return out;
}

/** A response object as its stream's events, numbered. */
export function responsesJsonToChunks(body: Json): Json[] {
  const pending = { ...body, status: 'in_progress', output: [], usage: null };
  const final = body.status === 'incomplete' ? 'response.incomplete' : body.status === 'failed' ? 'response.failed' : 'response.completed';
  const events = [
    { type: 'response.created', response: pending },
    { type: 'response.in_progress', response: pending },
    ...((body.output ?? []) as Json[]).flatMap(itemEvents),
    { type: final, response: body },
  ];
  return events.map((e, i) => ({ type: e.type, sequence_number: i, ...e }));
}
