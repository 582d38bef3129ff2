import { map, type OperatorFunction } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import type { GatewayEvent } from '../upstream/events.js';

/**
 * `GET /v1/models/{id}` from the answer of `GET /v1/models`: the listing's entry whose `id` is `id`,
 * as the answer (same status and headers), else a 404 `model_not_found`. The gateway knows a model
 * exactly when its listing names it, so retrieving one asks the same plan for the same list (and a
 * cached list serves it) rather than a provider route that not every provider has.
 */
export function pickModel(id: string): OperatorFunction<GatewayEvent, GatewayEvent> {
  return map((ev) => {
    if (ev.type !== 'json') return ev;
    // A cached answer carries only its text.
    const list = (ev.body ?? (ev.raw === undefined ? undefined : JSON.parse(ev.raw))) as { data?: unknown } | undefined;
    const data = Array.isArray(list?.data) ? (list.data as unknown[]) : [];
    const model = data.find((m) => m !== null && typeof m === 'object' && (m as { id?: unknown }).id === id);
    if (model === undefined) {
      throw new GatewayError('model_not_found', `The model "${id}" is not in this gateway's model list (GET /v1/models) for this request's provider.`, {
        param: 'model',
      });
    }
    return { type: 'json', status: ev.status, body: model, meta: ev.meta };
  });
}
