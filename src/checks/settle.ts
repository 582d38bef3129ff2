/**
 * One check run to a result the hook results can carry: a throw, a rejection or the time limit
 * becomes a failed check with `error` (fail closed) unless the hook opts out with
 * `fail_on_error: false` (then the verdict is a pass, and `error` still says what happened).
 */
import { applyNot, runCheck, type ResolvedCheck } from './registry.js';
import { DATA_JSON, type CheckDeps, type CheckInput, type CheckOutcome } from './types.js';

export const DEFAULT_CHECK_TIMEOUT_MS = 5_000;

export interface CheckResult {
  id: string;
  verdict: boolean;
  data: unknown;
  /** `data` as JSON text, when the check wrote it (hook_results use it; JSON.stringify skips it). */
  [DATA_JSON]?: string;
  error: string | null;
  /** Milliseconds. */
  execution_time: number;
  transformed: boolean;
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

/** Runs `check`; never rejects. `outcome` is present when the check answered (for `transformed`). */
export async function settleCheck(
  check: ResolvedCheck,
  input: CheckInput,
  deps: CheckDeps,
  o: SettleOptions = {},
): Promise<{ result: CheckResult; outcome?: CheckOutcome }> {
  const clock = o.clock ?? (() => performance.now());
  if (!check.def.io) return settleCheckSync(check, input, deps, o.failOnError !== false, clock);
  const timeoutMs = o.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const ac = new AbortController();
  const onParentAbort = (): void => ac.abort(o.signal?.reason);
  if (o.signal?.aborted) ac.abort(o.signal.reason);
  else o.signal?.addEventListener('abort', onParentAbort, { once: true });
  const started = clock();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const e = new Error(`timed out after ${timeoutMs} ms`);
      ac.abort(e);
      reject(e);
    }, timeoutMs);
  });
  try {
    const outcome = await Promise.race([runCheck(check, input, deps, ac.signal), timedOut]);
    return { result: answered(check, outcome, clock() - started), outcome };
  } catch (e) {
    return { result: failed(check, o.failOnError !== false, e, clock() - started) };
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onParentAbort);
  }
}

/** The result of a check that answered (`not` applied), with its data's JSON text when it wrote one. */
function answered(check: ResolvedCheck, outcome: CheckOutcome, ms: number): CheckResult {
  const result: CheckResult = { id: check.id, verdict: outcome.verdict, data: outcome.data ?? null, error: null, execution_time: ms3(ms), transformed: outcome.transformed !== undefined };
  const json = outcome[DATA_JSON];
  if (json !== undefined) result[DATA_JSON] = json;
  return result;
}

/** The result of a check that threw, rejected or timed out: failed unless the hook says `fail_on_error: false`. */
function failed(check: ResolvedCheck, failOnError: boolean, e: unknown, ms: number): CheckResult {
  return { id: check.id, verdict: !failOnError, data: null, error: e instanceof Error ? e.message : String(e), execution_time: ms3(ms), transformed: false };
}

/** A check that never waits on anything never aborts: no signal and no timer needed. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * A computation check (no `io`), run at once: its outcome, or a throw settled as `settleCheck` does.
 * A check that answers with a promise without declaring `io` fails (it would otherwise run without a
 * time limit). `started` lets a caller running checks back to back pass the previous one's `ended`
 * (one clock read per check instead of two).
 */
export function settleCheckSync(
  check: ResolvedCheck,
  input: CheckInput,
  deps: CheckDeps,
  failOnError = true,
  clock: () => number = () => performance.now(),
  started: number = clock(),
): { result: CheckResult; outcome?: CheckOutcome; ended: number } {
  try {
    const raw = check.def.run(input, check.params, deps, NEVER_ABORTED);
    if (raw instanceof Promise) {
      raw.catch(() => undefined);
      throw new Error(`check ${check.id} answered asynchronously but does not declare io`);
    }
    const outcome = applyNot(check, raw);
    const ended = clock();
    return { result: answered(check, outcome, ended - started), outcome, ended };
  } catch (e) {
    const ended = clock();
    return { result: failed(check, failOnError, e, ended - started), ended };
  }
}

/** Milliseconds to the microsecond, as `execution_time` reports them (shorter to write and read). */
export const ms3 = (ms: number): number => Math.round(ms * 1000) / 1000;
