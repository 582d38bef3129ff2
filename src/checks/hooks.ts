/**
 * Running a hook: its checks (concurrently, or one after the other when `sequential`), each bounded
 * by the hook's time limit, a throw or a timeout counted as a failure (fail closed) unless the hook
 * says `fail_on_error: false`; mutators' changes applied in order. What a hook *means* (deny, 246,
 * async, feedback) is decided by the stage operators; this only runs it and reports.
 */
import type { ResolvedCheck } from './registry.js';
import { DEFAULT_CHECK_TIMEOUT_MS, ms3, settleCheck, settleCheckSync, type CheckResult } from './settle.js';
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
function hookRun(spec: HookSpec, results: CheckResult[], transformed: CheckOutcome['transformed'], start: number, end = performance.now()): HookRun {
  const verdict = results.every((r) => r.verdict);
  const result: HookResult = {
    id: spec.id,
    verdict,
    deny: verdict ? spec.denyOnSuccess : spec.denyOnFail,
    async: spec.async,
    checks: results,
    execution_time: ms3(end - start),
    transformed: transformed !== undefined,
  };
  const feedback = verdict ? spec.onSuccess : spec.onFail;
  if (feedback) result.feedback = feedback;
  return transformed ? { result, transformed } : { result };
}

const now = (): number => performance.now();

/** Mutators chain (each sees the previous one's output): a hook with one runs its checks in order. */
const inOrder = (spec: HookSpec): boolean => spec.sequential || spec.checks.some((c) => c.def.mutator);

/**
 * Can the hook run synchronously? When none of its checks does I/O: they are computations over the
 * input, so no timer, signal or promise is needed (and none is made: on the hot path they cost more
 * than the checks).
 */
export const runsSync = (spec: HookSpec): boolean => spec.checks.every((c) => !c.def.io);

/**
 * Run one hook against `input`. Sequential checks see a mutator's output (the input made again from
 * the changed body, `withBodies`).
 */
export async function runHook(spec: HookSpec, input: CheckInput, deps: CheckDeps, signal?: AbortSignal): Promise<HookRun> {
  if (runsSync(spec)) return runHookSync(spec, input, deps);
  const start = performance.now();
  const results: CheckResult[] = [];
  let transformed: CheckOutcome['transformed'];
  if (inOrder(spec)) {
    let current = input;
    for (const c of spec.checks) {
      const { result, outcome } = await settleCheck(c, current, deps, { timeoutMs: spec.timeoutMs, failOnError: spec.failOnError, signal });
      results.push(result);
      if (outcome?.transformed) {
        transformed = { ...transformed, ...outcome.transformed };
        current = withBodies(current, outcome.transformed);
      }
    }
  } else {
    const runs = await Promise.all(spec.checks.map((c) => settleCheck(c, input, deps, { timeoutMs: spec.timeoutMs, failOnError: spec.failOnError, signal })));
    for (const { result } of runs) results.push(result);
  }
  return hookRun(spec, results, transformed, start);
}

/** `runHook` for a hook whose checks all compute (see `runsSync`): in order, at once. */
export function runHookSync(spec: HookSpec, input: CheckInput, deps: CheckDeps): HookRun {
  const start = performance.now();
  // Sized once: a hook's few results, not an array grown from empty (which reserves 17 slots).
  const checks = spec.checks;
  const results: CheckResult[] = new Array<CheckResult>(checks.length);
  let transformed: CheckOutcome['transformed'];
  let current = input;
  let t = start;
  for (let i = 0; i < checks.length; i++) {
    const { result, outcome, ended } = settleCheckSync(checks[i]!, current, deps, spec.failOnError, now, t);
    t = ended;
    results[i] = result;
    if (outcome?.transformed) {
      transformed = { ...transformed, ...outcome.transformed };
      current = withBodies(current, outcome.transformed);
    }
  }
  return hookRun(spec, results, transformed, start, t);
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
