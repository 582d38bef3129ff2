/**
 * Running a hook: its checks (concurrently, or one after the other when `sequential`), each bounded
 * by the hook's time limit, a throw or a timeout counted as a failure (fail closed) unless the hook
 * says `fail_on_error: false`; mutators' changes applied in order. What a hook *means* (deny, 246,
 * async, feedback) is decided by the stage operators; this only runs it and reports.
 */
import { forkJoin, map, mergeMap, tap, type Observable } from 'rxjs';
import type { ResolvedCheck } from './registry.js';
import { DEFAULT_CHECK_TIMEOUT_MS, ms3, settleCheck, type CheckResult, type SettleOptions, type Settled } from './settle.js';
import type { CheckDeps, CheckInput, CheckOutcome } from './types.js';
import { withBodies } from './text.js';
import { isLater, later, type NowOrLater } from '../util/now-or-later.js';

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

/** A hook's checks as they settle: their results by place, the mutators' changes, the input they left. */
interface Gathered {
  readonly spec: HookSpec;
  readonly deps: CheckDeps;
  readonly settle: SettleOptions;
  readonly start: number;
  readonly results: CheckResult[];
  transformed: CheckOutcome['transformed'];
  current: CheckInput;
}

/** The hook's result from its checks' results. */
function hookRun(g: Gathered): HookRun {
  const { spec, results, transformed } = g;
  const verdict = results.every((r) => r.verdict);
  const result: HookResult = {
    id: spec.id,
    verdict,
    deny: verdict ? spec.denyOnSuccess : spec.denyOnFail,
    async: spec.async,
    checks: results,
    execution_time: ms3(performance.now() - g.start),
    transformed: transformed !== undefined,
  };
  const feedback = verdict ? spec.onSuccess : spec.onFail;
  if (feedback) result.feedback = feedback;
  return transformed ? { result, transformed } : { result };
}

/** Mutators chain (each sees the previous one's output): a hook with one runs its checks in order. */
const inOrder = (spec: HookSpec): boolean => spec.sequential || spec.checks.some((c) => c.def.mutator);

/** Check `i`'s result taken: a mutator's change applied to what the next checks see (`withBodies`). */
function take(g: Gathered, i: number, { result, outcome }: Settled): void {
  g.results[i] = result;
  if (!outcome?.transformed) return;
  g.transformed = { ...g.transformed, ...outcome.transformed };
  g.current = withBodies(g.current, outcome.transformed);
}

/**
 * Runs one hook against `input`: its checks concurrently, or one after the other (sequential, or a
 * mutator among them), each seeing the previous mutator's output. A hook whose checks only compute
 * returns its run at once; one with an I/O check returns an Observable of it.
 */
export function runHook(spec: HookSpec, input: CheckInput, deps: CheckDeps, signal?: AbortSignal): NowOrLater<HookRun> {
  const settle: SettleOptions = { timeoutMs: spec.timeoutMs, failOnError: spec.failOnError, signal };
  const g: Gathered = { spec, deps, settle, start: performance.now(), results: new Array<CheckResult>(spec.checks.length), transformed: undefined, current: input };
  return gather(g, 0);
}

/**
 * The checks from `first` on, in a plain loop: a computation check's result is taken at once. An I/O
 * check is awaited before the next one starts when the hook runs in order, else beside the others.
 */
function gather(g: Gathered, first: number): NowOrLater<HookRun> {
  const checks = g.spec.checks;
  let waiting: Observable<unknown>[] | undefined;
  for (let i = first; i < checks.length; i++) {
    const settled = settleCheck(checks[i]!, g.current, g.deps, g.settle);
    if (!isLater(settled)) {
      take(g, i, settled);
      continue;
    }
    const taken = settled.pipe(tap((s) => take(g, i, s)));
    if (inOrder(g.spec)) return taken.pipe(mergeMap(() => later(gather(g, i + 1))));
    (waiting ??= []).push(taken);
  }
  return waiting ? forkJoin(waiting).pipe(map(() => hookRun(g))) : hookRun(g);
}

/** The input after a hook's run: a mutator's change to the body of the input's phase taken in. */
function afterRun(input: CheckInput, t: HookRun['transformed']): CheckInput {
  if (input.phase === 'request') return t?.request ? withBodies(input, { request: t.request }) : input;
  return t?.response ? withBodies(input, { response: t.response }) : input;
}

/**
 * Runs `hooks` one after the other on `input`, each on the input the previous one left (a mutator's
 * change); `take` gets each run before the next hook starts, and may throw (a denial ends the
 * stage with that error, thrown at once or the Observable's error). Returns the input the last hook
 * left: at once when every hook only computed, else an Observable of it.
 */
export function runInTurn(hooks: readonly HookSpec[], input: CheckInput, deps: CheckDeps, take: (spec: HookSpec, run: HookRun) => void): NowOrLater<CheckInput> {
  return turnsFrom(0, hooks, input, deps, take);
}

function turnsFrom(first: number, hooks: readonly HookSpec[], input: CheckInput, deps: CheckDeps, take: (spec: HookSpec, run: HookRun) => void): NowOrLater<CheckInput> {
  let current = input;
  for (let i = first; i < hooks.length; i++) {
    const h = hooks[i]!;
    const run = runHook(h, current, deps);
    const before = current;
    if (isLater(run)) {
      return run.pipe(
        mergeMap((r) => {
          take(h, r);
          return later(turnsFrom(i + 1, hooks, afterRun(before, r.transformed), deps, take));
        }),
      );
    }
    take(h, run);
    current = afterRun(current, run.transformed);
  }
  return current;
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
