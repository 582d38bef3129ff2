import { z } from 'zod';
import { parseOrThrow } from '../config/issues.js';
import { GatewayError } from '../errors/gateway-error.js';
import { inputItemView, outputView, parseInclude } from './response-include.js';
import type { ApiKeyRecord } from '../security/api-keys.js';
import { sameTenant } from '../security/tenancy.js';
import type { ResponseStore, StoredResponse } from '../state/response-store.js';
import type { BackgroundRuns } from '../pipeline/background-runs.js';
import { CANCELLED } from '../pipeline/background-stage.js';
import type { CancelChannel } from '../state/cancel-channel.js';
import { callerScope } from './common.js';

/** GET /v1/responses/:id/input_items: OpenAI's cursor page (`after` an item id, `limit` 1-100, `order`). */
const InputItemsQuery = z.strictObject({
  after: z.string().min(1, 'must not be empty').optional(),
  limit: z
    .string()
    .regex(/^\d{1,3}$/, 'must be a whole number from 1 to 100')
    .transform(Number)
    .pipe(z.number().int().min(1, 'at least 1').max(100, 'at most 100'))
    .default(20),
  order: z.enum(['asc', 'desc'], { error: 'must be asc or desc' }).default('desc'),
});

const GetQuery = z.strictObject({});

/** The statuses of a background response not yet over: another instance may be running it. */
const RUNNING = new Set(['queued', 'in_progress']);

type Query = Readonly<Record<string, unknown>>;

/** The query without its include parameters (they are read apart: repeatable, two spellings). */
function withoutInclude(query: Query): Query {
  const { include: _a, 'include[]': _b, ...rest } = query;
  return rest;
}

export interface InputItemsPage {
  object: 'list';
  data: Record<string, unknown>[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/**
 * The stored-responses routes' logic: a response is read and deleted only through a gateway key of
 * the (organisation, workspace) it was made in; any other id is a 404, as an unknown one is, so an id
 * reveals nothing about other tenants.
 */
export class ResponsesService {
  constructor(
    private readonly store: ResponseStore,
    /** The background responses this process runs (POST .../cancel stops them); absent: none run here. */
    private readonly background?: BackgroundRuns,
    /** With Redis: asks the other instances to stop a response this one does not run. */
    private readonly cancels?: CancelChannel,
  ) {}

  /** The stored record, when `key`'s tenant owns it; else 404 `response_not_found`. */
  async owned(id: string, key: ApiKeyRecord | undefined): Promise<StoredResponse> {
    let record: StoredResponse | undefined;
    try {
      record = await this.store.get(id);
    } catch (e) {
      throw new GatewayError('store_unavailable', 'The response store (Redis) is not reachable or did not answer in time; retry.', { cause: e });
    }
    if (!record || !sameTenant(record.owner, callerScope(key))) {
      throw new GatewayError('response_not_found', `No stored response has the id "${id}" in the workspace of this gateway key.`, { param: 'response_id' });
    }
    return record;
  }

  async get(id: string, query: Query, key: ApiKeyRecord | undefined): Promise<Record<string, unknown>> {
    const include = parseInclude(query);
    parseOrThrow(GetQuery, withoutInclude(query), 'invalid_query_parameter', 'query');
    return outputView((await this.owned(id, key)).response, include);
  }

  async delete(id: string, key: ApiKeyRecord | undefined): Promise<Record<string, unknown>> {
    await this.owned(id, key);
    try {
      await this.store.delete(id);
    } catch (e) {
      throw new GatewayError('store_unavailable', undefined, { cause: e });
    }
    return { id, object: 'response', deleted: true };
  }

  /**
   * POST /v1/responses/:id/cancel: a background response this process runs is stopped (its upstream
   * call aborted) and stored `cancelled`; one that runs on another instance (with Redis) is stopped
   * there, and answered once that instance stored it; one that has ended is answered as stored. A
   * response made without `background` is a 400.
   */
  async cancel(id: string, key: ApiKeyRecord | undefined): Promise<Record<string, unknown>> {
    const record = await this.owned(id, key);
    if (record.response.background !== true) {
      throw new GatewayError('invalid_request_body', `Only a background response can be cancelled; "${id}" was not made with background: true.`, { param: 'response_id' });
    }
    if (await this.stopHere(id, record)) return { ...record.response, ...CANCELLED };
    if (!this.cancels || !RUNNING.has(record.response.status as string)) return record.response;
    try {
      await this.cancels.request(id);
    } catch (e) {
      throw new GatewayError('store_unavailable', 'The cancel could not reach the other instances (Redis); retry.', { cause: e });
    }
    return (await this.owned(id, key)).response;
  }

  /**
   * Stops background response `id` when this process runs it, and stores it `cancelled`; false when
   * it does not run here. Other instances' cancel requests (with Redis) are answered by this.
   */
  async stopHere(id: string, known?: StoredResponse): Promise<boolean> {
    if (!this.background?.cancel(id)) return false;
    try {
      const record = known ?? (await this.store.get(id));
      if (record) await this.store.put({ ...record, response: { ...record.response, ...CANCELLED } });
    } catch (e) {
      throw new GatewayError('store_unavailable', 'The response was cancelled, but the store (Redis) did not take its new status.', { cause: e });
    }
    return true;
  }

  async inputItems(id: string, query: Query, key: ApiKeyRecord | undefined): Promise<InputItemsPage> {
    const include = parseInclude(query);
    const q = parseOrThrow(InputItemsQuery, withoutInclude(query), 'invalid_query_parameter', 'query');
    const items = [...(await this.owned(id, key)).input_items];
    if (q.order === 'desc') items.reverse();
    let start = 0;
    if (q.after !== undefined) {
      const at = items.findIndex((i) => i.id === q.after);
      if (at < 0) throw new GatewayError('invalid_query_parameter', `Invalid query: after: no input item of this response has the id "${q.after}"`, { param: 'after' });
      start = at + 1;
    }
    const data = items.slice(start, start + q.limit).map((i) => inputItemView(i, include));
    return {
      object: 'list',
      data,
      first_id: (data[0]?.id as string | undefined) ?? null,
      last_id: (data.at(-1)?.id as string | undefined) ?? null,
      has_more: start + q.limit < items.length,
    };
  }
}
