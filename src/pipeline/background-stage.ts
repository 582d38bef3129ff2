import { defer, finalize, switchMap, type Subscription } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import type { UsageLimitOptions } from '../operators/usage-limit.js';
import { recordResponse, type RecordResponseOptions } from '../operators/record-response.js';
import { completeResponse } from '../operators/response-object.js';
import type { StoredResponse } from '../state/response-store.js';
import type { RequestContext } from './context.js';
import type { Run, Wrap } from './stage.js';

type Obj = Record<string, unknown>;

/** A background response stopped by POST /v1/responses/:id/cancel (or by shutdown). */
export const CANCELLED: Obj = { status: 'cancelled' };

/** What the stored-responses stage hands on for one background request, and how it hears back. */
interface Handoff {
  record: RecordResponseOptions & { id: string };
  /** The request was admitted and its record stored `queued`: that is the client's answer. */
  queued(response: Obj): void;
  /** A record the store did not take while the run goes on (logged by the composition root). */
  storeFailed?: (id: string, error: unknown) => void;
  /** Set once the client has its answer: a run stopped from then on is stored cancelled. */
  announced?: boolean;
}

/**
 * The handoff between the two stages of one background request, by its context: the
 * stored-responses stage (before usage limits) leaves it, the background stage (after them) takes it.
 */
const handoffs = new WeakMap<RequestContext, Handoff>();

const stored = (o: Handoff['record'], response: Obj): StoredResponse => ({ response, input_items: o.inputItems, owner: o.owner });
const snapshot = (o: Handoff['record'], status: string): Obj => ({ ...completeResponse({}, o.body, o.id, Math.floor(o.now() / 1000)), status });

/**
 * Runs `inner` (the usage-limit stage, this stage, then the plan) detached, for background response
 * `record.id`: resolves with the response `queued` once the request is admitted and stored; rejects
 * with what refused it before (a usage limit's 412, a store out of reach), so the client hears it
 * as a synchronous request would, and nothing is stored. `started` gets the run's subscription
 * (unsubscribing stops it), `ended` is called once when it ends, however it ends.
 */
export function runDetached(
  inner: Run,
  ctx: RequestContext,
  handoff: Omit<Handoff, 'queued'>,
  run: { started(sub: Subscription): void; ended(): void },
): Promise<Obj> {
  return new Promise<Obj>((resolve, reject) => {
    handoffs.set(ctx, { ...handoff, queued: resolve });
    const notStarted = () => reject(new GatewayError('shutting_down', 'The gateway stopped before the background response started; retry the request.'));
    const sub = inner(ctx)
      .pipe(finalize(notStarted))
      .subscribe({
        error: (e: unknown) => {
          run.ended();
          reject(e);
        },
        complete: () => run.ended(),
      });
    if (!sub.closed) run.started(sub);
  });
}

async function start(h: Handoff): Promise<void> {
  const o = h.record;
  const queued = snapshot(o, 'queued');
  try {
    await o.store.put(stored(o, queued));
  } catch (e) {
    throw new GatewayError('store_unavailable', 'The response store (Redis) is not reachable; the background response was not started.', { cause: e });
  }
  h.announced = true;
  h.queued(queued);
  const running = stored(o, snapshot(o, 'in_progress'));
  await o.store.put(running).catch((e: unknown) => h.storeFailed?.(o.id, e));
}

/**
 * The background stage, after the usage limit: a background request reaches it once admitted. Its
 * record is stored `queued` (the client's answer), then `in_progress`, and only then does the plan
 * run, recorded under the announced id (src/operators/record-response.ts): GET shows `in_progress`
 * while any upstream call runs, then the final status; a run stopped (cancel, shutdown) is stored
 * `cancelled`. A failure before the plan runs gives back what the usage limit reserved.
 */
export function backgroundStage(limits: UsageLimitOptions['limits'] | undefined): Wrap {
  return (inner) => (ctx) => {
    const h = handoffs.get(ctx);
    if (!h) return inner(ctx);
    handoffs.delete(ctx);
    let running = false;
    return defer(() => start(h)).pipe(
      switchMap(() => {
        running = true;
        return inner(ctx).pipe(recordResponse(h.record));
      }),
      // once the plan runs, accounting (inside it) settles what the request holds, and the recorder
      // stores a stopped run cancelled; before, both are done here
      finalize(() => {
        if (running) return;
        void limits?.release(ctx.outcome);
        if (h.announced) void h.record.store.put(stored(h.record, { ...snapshot(h.record, 'in_progress'), ...CANCELLED })).catch((e: unknown) => h.storeFailed?.(h.record.id, e));
      }),
    );
  };
}
