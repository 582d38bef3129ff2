import { GatewayError } from '../errors/gateway-error.js';
import type { TenantScope } from '../security/tenancy.js';
import type { ResponseStore } from '../state/response-store.js';
import { asInput } from './previous-response.js';

type Obj = Record<string, unknown>;

const isReference = (item: unknown): item is Obj => typeof item === 'object' && item !== null && (item as Obj).type === 'item_reference';

/** Does the input name a stored item (`{type: "item_reference", id}`)? */
export function hasReferences(input: unknown): boolean {
  return Array.isArray(input) && input.some(isReference);
}

async function resolve(store: ResponseStore, ref: Obj, owner: TenantScope, param: string): Promise<Obj> {
  const id = ref.id;
  if (typeof id !== 'string' || id === '') throw new GatewayError('invalid_request_body', `Invalid request body: ${param}: an item_reference names an item id.`, { param });
  let item: Obj | undefined;
  try {
    item = await store.item(id, owner);
  } catch (e) {
    throw new GatewayError('store_unavailable', 'The response store (Redis) is not reachable or did not answer in time; retry.', { cause: e });
  }
  if (!item) throw new GatewayError('invalid_request_body', `Invalid request body: ${param}: no stored item has the id "${id}" in the workspace of this gateway key.`, { param });
  return asInput(item);
}

/**
 * The input with each `item_reference` replaced by the item it names: an input or output item of a
 * stored response of the same (organisation, workspace), as the next turn's input (without the
 * id and status the gateway gave it). An unknown id is a 400 naming `input[i].id`.
 */
export async function resolveReferences(store: ResponseStore, input: unknown, owner: TenantScope): Promise<unknown> {
  if (!hasReferences(input)) return input;
  return Promise.all((input as unknown[]).map((item, i) => (isReference(item) ? resolve(store, item, owner, `input[${i}].id`) : item)));
}
