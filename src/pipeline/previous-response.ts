import { GatewayError } from '../errors/gateway-error.js';
import { sameTenant, type TenantScope } from '../security/tenancy.js';
import type { ResponseStore, StoredResponse } from '../state/response-store.js';

type Obj = Record<string, unknown>;

/** The longest chain of previous responses rebuilt (a loop or a runaway chain stops here). */
export const PREVIOUS_CHAIN_MAX = 1000;

/** An item as the next request's input: without the id the gateway gave it (a provider may not know it). */
export function asInput(item: Obj): Obj {
  const { id: _id, status: _status, ...rest } = item;
  if (rest.type === 'message' && rest.role === 'assistant') return { type: 'message', role: 'assistant', content: rest.content };
  return rest;
}

async function load(store: ResponseStore, id: string, owner: TenantScope): Promise<StoredResponse> {
  let record: StoredResponse | undefined;
  try {
    record = await store.get(id);
  } catch (e) {
    throw new GatewayError('store_unavailable', 'The response store (Redis) is not reachable or did not answer in time; retry.', { cause: e });
  }
  if (!record || !sameTenant(record.owner, owner)) {
    throw new GatewayError('response_not_found', `previous_response_id: no stored response has the id "${id}" in the workspace of this gateway key.`, {
      param: 'previous_response_id',
    });
  }
  return record;
}

/**
 * The conversation before a request that names `previous_response_id`: each stored response of the
 * chain, oldest first, gives its input items and then its output, as input items. Instructions are
 * not carried (they live on the response, not in its items), and reasoning items are left out (a
 * provider's own, which another cannot read). Any response of the chain missing or another
 * tenant's: 404 naming previous_response_id.
 */
export async function previousItems(store: ResponseStore, id: string, owner: TenantScope): Promise<Obj[]> {
  const chain: StoredResponse[] = [];
  for (let next: unknown = id; typeof next === 'string' && chain.length < PREVIOUS_CHAIN_MAX; ) {
    const record = await load(store, next, owner);
    chain.unshift(record);
    next = record.response.previous_response_id;
  }
  return chain.flatMap((r) => [...r.input_items, ...((r.response.output as Obj[] | undefined) ?? [])].filter((i) => i.type !== 'reasoning').map(asInput));
}

/** The request's own input as items (a string is one user message). */
export function ownInput(input: unknown): Obj[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return Array.isArray(input) ? (input as Obj[]) : [];
}
