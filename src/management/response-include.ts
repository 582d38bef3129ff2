/**
 * The `include` query parameter of GET /v1/responses/:id and its input items: which extra data an
 * answer carries. Exactly three values are accepted, each repeatable or comma separated (`include`,
 * or `include[]` as the openai SDKs write it); anything else is a 400 naming it. The data a value
 * asks for is shown when it was stored; without the value it is left out.
 */
import { fieldError } from './common.js';

export const INCLUDE_VALUES = ['file_search_call.results', 'message.input_image.image_url', 'computer_call_output.output.image_url'] as const;
export type IncludeValue = (typeof INCLUDE_VALUES)[number];

/** The query's include values (both spellings, repeated or comma separated) → the set asked for. */
export function parseInclude(query: Readonly<Record<string, unknown>>): ReadonlySet<IncludeValue> {
  const asked = new Set<IncludeValue>();
  for (const name of ['include', 'include[]']) {
    const raw = query[name];
    if (raw === undefined) continue;
    for (const part of (Array.isArray(raw) ? raw : [raw]).flatMap((v) => String(v).split(','))) {
      const value = part.trim();
      if (!(INCLUDE_VALUES as readonly string[]).includes(value)) {
        throw fieldError('invalid_query_parameter', 'include', `"${value}" is not one of ${INCLUDE_VALUES.join(', ')}`);
      }
      asked.add(value as IncludeValue);
    }
  }
  return asked;
}

type Item = Record<string, unknown>;

/** A response's output as shown: file search results only when asked for. */
export function outputView(response: Item, include: ReadonlySet<IncludeValue>): Item {
  if (include.has('file_search_call.results') || !Array.isArray(response.output)) return response;
  const output = (response.output as Item[]).map((o) => {
    if (o.type !== 'file_search_call' || !('results' in o)) return o;
    const { results: _results, ...rest } = o;
    return rest;
  });
  return { ...response, output };
}

/** An input item as shown: input images' URLs and computer screenshots' URLs only when asked for. */
export function inputItemView(item: Item, include: ReadonlySet<IncludeValue>): Item {
  if (item.type === 'computer_call_output' && !include.has('computer_call_output.output.image_url')) {
    const output = item.output as Item | undefined;
    if (output && typeof output === 'object' && 'image_url' in output) {
      const { image_url: _url, ...rest } = output;
      return { ...item, output: rest };
    }
  }
  if (item.type === 'message' && Array.isArray(item.content) && !include.has('message.input_image.image_url')) {
    const content = (item.content as Item[]).map((c) => {
      if (c.type !== 'input_image' || !('image_url' in c)) return c;
      const { image_url: _url, ...rest } = c;
      return rest;
    });
    return { ...item, content };
  }
  return item;
}
