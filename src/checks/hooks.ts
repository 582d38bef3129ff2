/**
 * Running a hook: its checks (concurrently, or one after the other when `sequential`), each bounded
 * by the hook's time limit, a throw or a timeout counted as a failure (fail closed) unless the hook
 * says `fail_on_error: false`; mutators' changes applied in order. What a hook *means* (deny, 246,
 * async, feedback) is decided by the stage operators; this only runs it and reports.
 */
import { defaultIfEmpty, defer, from, map, mergeMap, mergeScan, takeLast, tap, toArray, type Observable } from 'rxjs';
import type { ResolvedCheck } from './registry.js';
import { DEFAULT_CHECK_TIMEOUT_MS, ms3, settleCheck, type CheckResult, type Settled } from './settle.js';
import type { CheckDeps, CheckInput, CheckOutcome } from './types.js';
import { withBodies } from './text.js';

export type HookList = 'input_guardrails' | 'before_request_hooks' | 'output_guardrails' | 'after_request_hooks';

export interface Feedback {
  value?: number;
  weight?: number;
  metadata?: Record<string, unknown>;
}

export interface HookSpec {
  /** The hook's id; a guardrail entry without one is named by its place, e.g. `input_guardrails[0]`. */
  id: string;
  list: HookList;
  /** JSON path of the entry in the config, for errors. */
  path: string;
  /** `guardrail` decides; `mutator` changes the request or answer (a guardrail entry whose checks are all mutators is one). */
  type: 'guardrail' | 'mutator';
  checks: ResolvedCheck[];
  /** Answer 446 when the hook fails (guardrail entry `deny`, or `on_fail.deny`). */
  denyOnFail: boolean;
  /** Answer 446 when the hook passes (`on_success.deny`, as configs may ask of before hooks). */
  denyOnSuccess: boolean;
  /** Runs after the answer without delaying it; its verdict never changes the answer. */
  async: boolean;
  /** A check that throws or times out fails the hook (fail closed) unless this is false. */
  failOnError: boolean;
  /** Run the checks one after the other (mutators see the previous output) instead of concurrently. */
  sequential: boolean;
  /** Time limit of each check, ms. */
  timeoutMs: number;
  onFail?: Feedback;
  onSuccess?: Feedback;
}

export { DEFAULT_CHECK_TIMEOUT_MS };

/** One hook's result, as `hook_results` shows it. */
export interface HookResult {
  id: string;
  verdict: boolean;
  /** This result denied the request or answer (446). */
  deny: boolean;
  async: boolean;
  checks: CheckResult[];
  /** ms */
  execution_time: number;
  transformed: boolean;
  /** The feedback its outcome records (on_success / on_fail). */
  feedback?: Feedback;
  /** The target whose answer an output hook checked (JSON path). */
  target?: string;
}

export interface HookRun {
  result: HookResult;
  /** The mutated bodies, when a mutator changed something. */
  transformed?: CheckOutcome['transformed'];
}

/** The hook's result from its checks' results. */
function hookRun(spec: HookSpec, results: CheckResult[], transformed: CheckOutcome['transformed'], start: number): HookRun {
  const verdict = results.every((r) => r.verdict);
  const result: HookResult = {
    id: spec.id,
    verdict,
    deny: verdict ? spec.denyOnSuccess : spec.denyOnFail,
    async: spec.async,
    checks: results,
    execution_time: ms3(performance.now() - start),
    transformed: transformed !== undefined,
  };
  const feedback = verdict ? spec.onSuccess : spec.onFail;
  if (feedback) result.feedback = feedback;
  return transformed ? { result, transformed } : { result };
}

/** Mutators chain (each sees the previous one's output): a hook with one runs its checks in order. */
const inOrder = (spec: HookSpec): boolean => spec.sequential || spec.checks.some((c) => c.def.mutator);

/**
 * Runs one hook against `input` when subscribed: its checks concurrently, or one after the other
 * (sequential, or a mutator among them), each seeing the previous mutator's output (the input made
 * again from the changed body, `withBodies`). Emits its run; a hook whose checks only compute emits
 * it during the subscription.
 */
export function runHook(spec: HookSpec, input: CheckInput, deps: CheckDeps, signal?: AbortSignal): Observable<HookRun> {
  const settle = { timeoutMs: spec.timeoutMs, failOnError: spec.failOnError, signal };
  return defer(() => {
    const start = performance.now();
    const results: CheckResult[] = [];
    let transformed: CheckOutcome['transformed'];
    let current = input;
    const taken = (i: number) => ({ result, outcome }: Settled): void => {
      results[i] = result;
      if (!outcome?.transformed) return;
      transformed = { ...transformed, ...outcome.transformed };
      current = withBodies(current, outcome.transformed);
    };
    return from(spec.checks).pipe(
      mergeMap((c, i) => settleCheck(c, current, deps, settle).pipe(tap(taken(i))), inOrder(spec) ? 1 : Infinity),
      toArray(),
      map(() => hookRun(spec, results, transformed, start)),
    );
  });
}

/** The input after a hook's run: a mutator's change to the body of the input's phase taken in. */
function afterRun(input: CheckInput, t: HookRun['transformed']): CheckInput {
  if (input.phase === 'request') return t?.request ? withBodies(input, { request: t.request }) : input;
  return t?.response ? withBodies(input, { response: t.response }) : input;
}

/**
 * Runs `hooks` one after the other on `input`, each on the input the previous one left (a mutator's
 * change); `take` gets each run before the next hook starts, and may throw (a denial ends the
 * stage with that error). Emits the input the last hook left.
 */
export function runInTurn(hooks: readonly HookSpec[], input: CheckInput, deps: CheckDeps, take: (spec: HookSpec, run: HookRun) => void): Observable<CheckInput> {
  return from(hooks).pipe(
    mergeScan(
      (current, h) =>
        runHook(h, current, deps).pipe(
          map((run) => {
            take(h, run);
            return afterRun(current, run.transformed);
          }),
        ),
      input,
      1,
    ),
    takeLast(1),
    defaultIfEmpty(input),
  );
}

/** What a request's hooks produced so far: `hook_results`, and whether a sync hook failed without deny (246). */
export interface HookAccount {
  before: HookResult[];
  after: HookResult[];
  failed: boolean;
}

/** The `hook_results` member of an answer. */
export function hookResultsBody(a: HookAccount): { before_request_hooks: HookResult[]; after_request_hooks: HookResult[] } {
  return { before_request_hooks: a.before, after_request_hooks: a.after };
}
