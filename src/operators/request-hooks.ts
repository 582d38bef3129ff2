import { forkJoin, mergeMap, type MonoTypeOperatorFunction } from 'rxjs';
import { hookResultsBody, runHook, runInTurn, type HookAccount, type HookResult, type HookRun, type HookSpec } from '../checks/hooks.js';
import { requestInput } from '../checks/text.js';
import type { CheckDeps, CheckEndpoint, CheckInput } from '../checks/types.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Telemetry } from '../metrics/telemetry.js';
import { andThen, later, type NowOrLater } from '../util/now-or-later.js';

/**
 * The part of a request the hook stages read and write: its request (a mutator's change replaces the
 * body) and the account of its hooks. The pipeline's RequestOutcome (src/pipeline/outcome.ts) is one.
 */
export interface HookedRequest {
  traceId: string;
  request: { endpoint: string; body: Record<string, unknown> | undefined; headers: Record<string, string | string[] | undefined>; stream: boolean };
  metadata?: Record<string, unknown>;
  hooks?: HookAccount;
}

export interface HookStageDeps {
  checks: CheckDeps;
  telemetry: Telemetry;
  /** Results of async hooks, when they are done (the answer may have long been sent): logged. */
  onAsync: (traceId: string, results: HookResult[], phase: 'request' | 'response') => void;
}

export function accountOf(ctx: HookedRequest): HookAccount {
  return (ctx.hooks ??= { before: [], after: [], failed: false });
}

/** Metrics of one hook's run: each check's verdict and time, a denial, the feedback. */
export function measureHook(r: HookResult, list: string, telemetry: Telemetry): void {
  try {
    for (const c of r.checks) telemetry.check(c.id, c.error !== null ? 'error' : c.verdict ? 'pass' : 'fail', c.execution_time / 1000);
    if (r.deny) telemetry.hookDenied(r.id, list);
    if (r.feedback?.value !== undefined) telemetry.feedback(r.id, r.feedback.value, r.feedback.weight ?? 1);
  } catch {
    // a metrics failure never changes a verdict
  }
}

/** Checks whose `data` comes from outside the gateway (a webhook's reply may quote what it checked). */
const FOREIGN_DATA = new Set(['default.webhook']);

/**
 * Who denied, for the 446's message: the hook (its id and list) and the ids of the checks that decided
 * it (those that failed, or those that passed when the hook denies on success). Ids come from the
 * config, never from the checked text, so the message may quote them.
 */
export function denialMessage(result: HookResult, list: HookSpec['list'], phase: 'request' | 'answer'): string {
  const ids = (pick: (c: HookResult['checks'][number]) => boolean): string => [...new Set(result.checks.filter(pick).map((c) => c.id))].join(', ');
  const who = `Hook "${result.id}" (${list}) denied the ${phase}`;
  if (result.verdict) {
    const passed = ids(() => true);
    return `${who}: it passed, and it denies on success${passed ? ` (checks: ${passed})` : ''}.`;
  }
  const failed = ids((c) => !c.verdict && c.error === null);
  const errored = ids((c) => !c.verdict && c.error !== null);
  const parts: string[] = [];
  if (failed) parts.push(`failed: ${failed}`);
  if (errored) parts.push(`could not run (error or time limit): ${errored}`);
  return `${who}: ${parts.length > 0 ? `checks ${parts.join('; ')}` : 'it failed'}.`;
}

/**
 * The 446, naming the hook that denied and its deciding checks (`denialMessage`). A denied answer is
 * never quoted, not even in a check's `data`: the built-in checks report counts, offsets and
 * configured words only, and the data of checks answered from outside (a webhook) is left out of an
 * answer's denial.
 */
export function deniedError(account: HookAccount, phase: 'request' | 'answer', denied: HookResult, list: HookSpec['list']): GatewayError {
  let results = hookResultsBody(account);
  if (phase === 'answer') {
    const scrub = (h: HookAccount['after'][number]) =>
      h.checks.some((c) => FOREIGN_DATA.has(c.id) && c.data !== undefined && c.data !== null)
        ? { ...h, checks: h.checks.map((c) => (FOREIGN_DATA.has(c.id) ? { ...c, data: null } : c)) }
        : h;
    results = { before_request_hooks: results.before_request_hooks, after_request_hooks: results.after_request_hooks.map(scrub) };
  }
  return new GatewayError('hooks_failed', denialMessage(denied, list, phase), { extra: { hook_results: results } });
}

/**
 * A sync hook's final result taken into the request's account, by either stage (`before` for the
 * request's hooks, `after` for the answer's): measured; a denial throws the 446; a failure without
 * deny marks the request (246).
 */
export function takeResult(telemetry: Telemetry, account: HookAccount, side: 'before' | 'after', list: HookSpec['list'], result: HookResult): void {
  account[side].push(result);
  measureHook(result, list, telemetry);
  if (result.deny) throw deniedError(account, side === 'before' ? 'request' : 'answer', result, list);
  if (!result.verdict) account.failed = true;
}

/**
 * Async hooks (request or answer phase): run beside it, never changing it. An async hook never
 * denies, so its results are reported with `deny: false` (and the answer's `target`), measured as
 * reported, and logged.
 */
export function runInBackground(background: readonly HookSpec[], input: CheckInput, deps: HookStageDeps, traceId: string, phase: 'request' | 'response', target?: string): void {
  forkJoin(background.map((h) => later(runHook(h, input, deps.checks)))).subscribe((runs) => {
    const results = runs.map((r): HookResult => (target === undefined ? { ...r.result, deny: false } : { ...r.result, deny: false, target }));
    results.forEach((r, i) => measureHook(r, background[i]!.list, deps.telemetry));
    deps.onAsync(traceId, results, phase);
  });
}

export interface RequestHooksOptions {
  /** The stage's hooks: input guardrails or before hooks, compiled with the plan. */
  hooks: readonly HookSpec[];
  deps: HookStageDeps;
}

/**
 * A request stage: input guardrails or before hooks, run in order on the request before the cache
 * lookup and the upstream call. A hook that denies ends the request with 446 (the provider is not
 * called, nothing is cached); a failed check without deny marks the answer 246; a mutator's change
 * replaces the request body (so the cache key and the provider see it). Async hooks run beside the
 * request and never change it. Endpoints without a body (models) pass untouched.
 */
export function requestHooks<C extends HookedRequest>(o: RequestHooksOptions): MonoTypeOperatorFunction<C> {
  const check = checkRequest<C>(o);
  return mergeMap((ctx) => later(check(ctx)));
}

/**
 * `requestHooks` on one request, for a caller that runs it itself (the pipeline's hook gate,
 * src/pipeline/node-stages.ts): the context at once when every sync hook only computed (a denial is
 * then thrown), else an Observable of it (a denial is its error).
 */
export function checkRequest<C extends HookedRequest>({ hooks, deps }: RequestHooksOptions): (ctx: C) => NowOrLater<C> {
  const sync = hooks.filter((h) => !h.async);
  const background = hooks.filter((h) => h.async);
  return (ctx) => {
    const req = ctx.request;
    if (req.endpoint === 'models' || !req.body) return ctx;
    const input = requestInput({ endpoint: req.endpoint as CheckEndpoint, body: req.body, metadata: ctx.metadata, headers: req.headers, traceId: ctx.traceId });
    if (background.length > 0) runInBackground(background, input, deps, ctx.traceId, 'request');
    const take = (h: HookSpec, run: HookRun): void => takeResult(deps.telemetry, accountOf(ctx), 'before', h.list, run.result);
    return andThen(runInTurn(sync, input, deps.checks, take), (after) => {
      // Compared with the body the hooks were given, not with the context's request now, which
      // another stage sharing the context (a race's contender) may have changed meanwhile.
      if (after.request.body !== req.body) ctx.request = { ...req, body: after.request.body };
      return ctx;
    });
  };
}
