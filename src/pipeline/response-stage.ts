import { defer, of, switchMap, type Observable } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import type { KeyScope } from '../limits/types.js';
import { recordResponse, type RecordResponseOptions } from '../operators/record-response.js';
import { inputItems, newId } from '../operators/response-object.js';
import type { TenantScope } from '../security/tenancy.js';
import type { ResponseStore } from '../state/response-store.js';
import type { GatewayEvent } from '../upstream/events.js';
import type { BackgroundRuns } from './background-runs.js';
import { CANCELLED, runDetached } from './background-stage.js';
import type { RequestContext } from './context.js';
import { hasReferences, resolveReferences } from './item-reference.js';
import { ownInput, previousItems } from './previous-response.js';
import type { Run, Wrap } from './stage.js';

type Obj = Record<string, unknown>;

/** What the stored-responses stage is built with (the composition root's stores and bounds). */
export interface ResponsesDeps {
  store: ResponseStore;
  background: BackgroundRuns;
  /** Milliseconds (the pipeline's clock). */
  now: () => number;
  /** A record the store did not take (the answer goes on): logged by the composition root. */
  storeFailed?: (id: string, error: unknown) => void;
}

/** What a client's leaving makes of a response it was reading: it did not end, and nobody waits for it. */
const CLIENT_LEFT: Obj = { status: 'incomplete', incomplete_details: { reason: 'client_cancelled' } };
function ownerOf(key: KeyScope | undefined): TenantScope {
  const o: TenantScope = {};
  if (key?.workspace_id !== undefined) o.workspace_id = key.workspace_id;
  if (key?.organisation_id !== undefined) o.organisation_id = key.organisation_id;
  return o;
}

/** The body the upstream gets: the conversation rebuilt before its own input, without what the gateway handles itself. */
async function upstreamBody(deps: ResponsesDeps, body: Obj, owner: TenantScope): Promise<Obj> {
  const { previous_response_id: previous, background: _background, ...rest } = body;
  if (typeof previous !== 'string') return rest;
  return { ...rest, input: [...(await previousItems(deps.store, previous, owner)), ...ownInput(body.input)] };
}

function checkBackground(body: Obj): void {
  if (body.stream === true) throw new GatewayError('invalid_request_body', 'Invalid request body: background: a background response is read with GET /v1/responses/{id}; send stream: false.', { param: 'background' });
  if (body.store === false) throw new GatewayError('invalid_request_body', 'Invalid request body: background: a background response is stored; send store: true or leave it out.', { param: 'background' });
}

/**
 * Starts the request detached, under an id announced once it is admitted (src/pipeline/background-stage.ts):
 * the answer is the response `queued`; the run goes on when the client leaves, and is stopped by
 * cancel (src/pipeline/background-runs.ts). Refused before it starts (a usage limit, the store): the
 * client hears it at once and nothing is stored.
 */
async function startBackground(deps: ResponsesDeps, inner: Run, ctx: RequestContext, record: RecordResponseOptions & { id: string }): Promise<GatewayEvent> {
  const id = record.id;
  deps.background.admit(id, ctx.key?.name ?? '');
  const queued = await runDetached(inner, ctx, { record, storeFailed: deps.storeFailed }, {
    started: (sub) => deps.background.started(id, sub),
    ended: () => deps.background.leave(id),
  });
  return { type: 'json', status: 200, body: queued, meta: { provider: 'gateway', target: 'background', retries: 0 } };
}

/**
 * The stored-responses stage, for requests to the Responses endpoint: `item_reference` items
 * resolved (src/pipeline/item-reference.ts) and `previous_response_id` rebuilt into the input before routing; the answer recorded (src/operators/record-response.ts)
 * unless `store` is false; `background: true` answered at once and run detached. Other endpoints
 * pass untouched.
 */
export function storedResponses(deps: ResponsesDeps): Wrap {
  return (inner) => (ctx) => {
    const body = ctx.request.body;
    if (ctx.request.endpoint !== 'responses' || body === undefined) return inner(ctx);
    if (body.store === false && body.background !== true && typeof body.previous_response_id !== 'string' && !hasReferences(body.input)) return inner(ctx);
    return defer(() => run(deps, inner, ctx, body)).pipe(switchMap((answer) => answer));
  };
}

async function run(deps: ResponsesDeps, inner: Run, ctx: RequestContext, body: Obj): Promise<Observable<GatewayEvent>> {
  const owner = ownerOf(ctx.key);
  if (body.background === true) checkBackground(body);
  const input = await resolveReferences(deps.store, body.input, owner);
  const own = input === body.input ? body : { ...body, input };
  ctx.request = { ...ctx.request, body: await upstreamBody(deps, own, owner) };
  if (body.store === false) return inner(ctx);
  const record: Omit<RecordResponseOptions, 'abandoned'> = {
    store: deps.store,
    body,
    inputItems: inputItems(own.input),
    owner,
    now: deps.now,
    written: (r, e) => {
      if (e !== undefined) deps.storeFailed?.(r.response.id as string, e);
    },
  };
  if (body.background === true) return of(await startBackground(deps, inner, ctx, { ...record, abandoned: CANCELLED, id: newId('resp') }));
  return inner(ctx).pipe(recordResponse({ ...record, abandoned: CLIENT_LEFT }));
}
