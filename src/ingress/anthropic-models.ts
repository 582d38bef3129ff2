import { map, pipe, type OperatorFunction } from 'rxjs';
import { pickModel } from '../operators/pick-model.js';
import type { ProviderRequest } from '../providers/types.js';
import type { GatewayEvent } from '../upstream/events.js';
import { ANTHROPIC_FRAMING } from './anthropic-framing.js';
import type { IngressFormat } from './types.js';

type Json = Record<string, unknown>;

/** An entry of the gateway's model list (OpenAI's shape) → Anthropic's `{type:"model", id, display_name, created_at}`. */
function anthropicModel(m: Json): Json {
  const created = typeof m.created === 'number' && m.created > 0 ? new Date(m.created * 1000).toISOString() : new Date(0).toISOString();
  return { type: 'model', id: m.id, display_name: typeof m.display_name === 'string' ? m.display_name : m.id, created_at: created };
}

const bodyOf = (ev: Extract<GatewayEvent, { type: 'json' }>): Json | undefined =>
  (ev.body ?? (ev.raw === undefined ? undefined : JSON.parse(ev.raw))) as Json | undefined;

/** A JSON answer's body rewritten by `fn` (a cached answer carries only its text). */
const reshape = (fn: (body: Json | undefined) => Json): OperatorFunction<GatewayEvent, GatewayEvent> =>
  map((ev) => (ev.type === 'json' ? { type: 'json', status: ev.status, body: fn(bodyOf(ev)), meta: ev.meta } : ev));

/** The gateway's list → Anthropic's page: every model on one page. */
export const anthropicModelList = (): OperatorFunction<GatewayEvent, GatewayEvent> =>
  reshape((list) => {
    const data = (Array.isArray(list?.data) ? (list.data as Json[]) : []).map(anthropicModel);
    return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
  });

/**
 * The model list in Anthropic's shape, for clients that send `anthropic-version` (the Anthropic SDKs'
 * models.list and models.retrieve): the same plan's list (src/ingress/models.ts), each entry as
 * Anthropic writes one, errors in Anthropic's envelope.
 */
export const ANTHROPIC_MODELS: IngressFormat = {
  id: 'anthropic-models',
  endpoint: 'models',
  selectedBy: 'anthropic-version',
  routes: [
    { method: 'GET', path: '/v1/models', answer: anthropicModelList },
    { method: 'GET', path: '/v1/models/:id', pathname: '/v1/models', answer: (params) => pipe(pickModel(params.id!), reshape((m) => anthropicModel(m ?? {}))) },
  ],
  hasBody: false,
  parse: () => undefined,
  toRequest: (body, headers): ProviderRequest => ({ endpoint: 'models', body, stream: false, headers }),
  framing: ANTHROPIC_FRAMING,
};
