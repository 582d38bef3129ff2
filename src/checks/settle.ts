/**
 * One check run to a result the hook results can carry: a throw, a rejection or the time limit
 * becomes a failed check with `error` (fail closed) unless the hook opts out with
 * `fail_on_error: false` (then the verdict is a pass, and `error` still says what happened).
 */
import { catchError, defer, from, map, Observable, of, tap, throwError, timeout } from 'rxjs';
import { applyNot, runCheck, type ResolvedCheck } from './registry.js';
import type { CheckDeps, CheckInput, CheckOutcome } from './types.js';
import type { NowOrLater } from '../util/now-or-later.js';

export const DEFAULT_CHECK_TIMEOUT_MS = 5_000;

export interface CheckResult {
  id: string;
  verdict: boolean;
  data: unknown;
  error: string | null;
  /** Milliseconds. */
  execution_time: number;
  transformed: boolean;
}

/** A check run to its result; `outcome` is present when the check answered (for `transformed`). */
export interface Settled {
  result: CheckResult;
  outcome?: CheckOutcome;
}

export interface SettleOptions {
  /** The check's time limit (ms). */
  timeoutMs?: number;
  /** The request's signal (client gone): aborts the check too. */
  signal?: AbortSignal;
  /** false: an error counts as a pass (still reported). Default true. */
  failOnError?: boolean;
  /** High-resolution clock for execution_time (default performance.now). */
  clock?: () => number;
}

const now = (): number => performance.now();

/**
 * Runs `check`, to one result, never an error. A computation check (no `io`) runs at once and its
 * result is returned; an I/O check is an Observable that runs it when subscribed.
 */
export function settleCheck(check: ResolvedCheck, input: CheckInput, deps: CheckDeps, o: SettleOptions = {}): NowOrLater<Settled> {
  const clock = o.clock ?? now;
  if (check.def.io) {
    return defer(() => {
      const started = clock();
      return awaited(check, input, deps, o).pipe(
        map((outcome): Settled => ({ result: answered(check, outcome, clock() - started), outcome })),
        catchError((e: unknown) => of<Settled>({ result: failed(check, o.failOnError !== false, e, clock() - started) })),
      );
    });
  }
  const started = clock();
  try {
    const outcome = computed(check, input, deps);
    return { result: answered(check, outcome, clock() - started), outcome };
  } catch (e) {
    return { result: failed(check, o.failOnError !== false, e, clock() - started) };
  }
}

/** The result of a check that answered (`not` applied). */
function answered(check: ResolvedCheck, outcome: CheckOutcome, ms: number): CheckResult {
  return { id: check.id, verdict: outcome.verdict, data: outcome.data ?? null, error: null, execution_time: ms3(ms), transformed: outcome.transformed !== undefined };
}

/** The result of a check that threw, rejected or timed out: failed unless the hook says `fail_on_error: false`. */
function failed(check: ResolvedCheck, failOnError: boolean, e: unknown, ms: number): CheckResult {
  return { id: check.id, verdict: !failOnError, data: null, error: e instanceof Error ? e.message : String(e), execution_time: ms3(ms), transformed: false };
}

/** A check that never waits on anything never aborts: no signal and no timer needed. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * A computation check's outcome. One that answers with a promise without declaring `io` throws (it
 * would otherwise run without a time limit).
 */
function computed(check: ResolvedCheck, input: CheckInput, deps: CheckDeps): CheckOutcome {
  const raw = check.def.run(input, check.params, deps, NEVER_ABORTED);
  if (raw instanceof Promise) {
    raw.catch(() => undefined);
    throw new Error(`check ${check.id} answered asynchronously but does not declare io`);
  }
  return applyNot(check, raw);
}

/**
 * An I/O check's outcome, within its time limit. Its signal aborts at the limit, when the request's
 * signal does, or when the result is no longer wanted (unsubscribed before it came).
 */
function awaited(check: ResolvedCheck, input: CheckInput, deps: CheckDeps, o: SettleOptions): Observable<CheckOutcome> {
  const timeoutMs = o.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  // Its own Observable: the abort controller lives as long as the subscription (RxJS has no operator that holds one).
  return new Observable<CheckOutcome>((subscriber) => {
    const ac = new AbortController();
    const onParentAbort = (): void => ac.abort(o.signal?.reason);
    if (o.signal?.aborted) ac.abort(o.signal.reason);
    else o.signal?.addEventListener('abort', onParentAbort, { once: true });
    const timedOut = (): Observable<never> => {
      const e = new Error(`timed out after ${timeoutMs} ms`);
      ac.abort(e);
      return throwError(() => e);
    };
    let done = false;
    const settled = (): void => {
      done = true;
    };
    const sub = from(runCheck(check, input, deps, ac.signal))
      .pipe(timeout({ first: timeoutMs, with: timedOut }), tap({ next: settled, error: settled }))
      .subscribe(subscriber);
    return () => {
      if (!done) ac.abort(new Error('the check is no longer needed'));
      sub.unsubscribe();
      o.signal?.removeEventListener('abort', onParentAbort);
    };
  });
}

/** Milliseconds to the microsecond, as `execution_time` reports them (shorter to write and read). */
export const ms3 = (ms: number): number => Math.round(ms * 1000) / 1000;
