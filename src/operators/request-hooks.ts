import { map, Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { hookResultsBody, runHook, runHookSync, runsSync, type HookAccount, type HookResult, type HookRun, type HookSpec } from '../checks/hooks.js';
import { requestInput, withBodies } from '../checks/text.js';
import type { CheckDeps, CheckEndpoint, CheckInput } from '../checks/types.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Telemetry } from '../metrics/telemetry.js';

/** The part of a request's context the hook stages read and write: the pipeline's RequestContext is one. */
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

/** The stage's hooks as the request path uses them, sorted once per plan. */
interface RequestStage {
  sync: readonly HookSpec[];
  background: readonly HookSpec[];
  /** Every sync hook only computes: they run at once, no promise. */
  allSync: boolean;
  deps: HookStageDeps;
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

/** One sync hook's run taken into the account: the body it leaves (a mutator's); throws the 446. */
function take(stage: RequestStage, account: HookAccount, h: HookSpec, run: HookRun, body: Record<string, unknown>): Record<string, unknown> {
  takeResult(stage.deps.telemetry, account, 'before', h.list, run.result);
  return run.transformed?.request ? run.transformed.request.body : body;
}

/** The request's body after the sync hooks, at once (computation checks only); throws the 446. */
function runNow(stage: RequestStage, input: CheckInput, account: HookAccount): Record<string, unknown> {
  let body = input.request.body!;
  for (const h of stage.sync) {
    const next = take(stage, account, h, runHookSync(h, input, stage.deps.checks), body);
    if (next !== body) input = withBodies(input, { request: { body: (body = next) } });
  }
  return body;
}

/** `runNow` for hooks that wait on I/O; rejects with the 446. */
async function runLater(stage: RequestStage, input: CheckInput, account: HookAccount): Promise<Record<string, unknown>> {
  let body = input.request.body!;
  for (const h of stage.sync) {
    const next = take(stage, account, h, await runHook(h, input, stage.deps.checks), body);
    if (next !== body) input = withBodies(input, { request: { body: (body = next) } });
  }
  return body;
}

/**
 * Async hooks (request or answer phase): run beside it, never changing it. An async hook never
 * denies, so its results are reported with `deny: false` (and the answer's `target`), measured as
 * reported, and logged.
 */
export function runInBackground(background: readonly HookSpec[], input: CheckInput, deps: HookStageDeps, traceId: string, phase: 'request' | 'response', target?: string): void {
  void Promise.all(background.map((h) => runHook(h, input, deps.checks))).then(
    (runs) => {
      const results = runs.map((r): HookResult => (target === undefined ? { ...r.result, deny: false } : { ...r.result, deny: false, target }));
      results.forEach((r, i) => measureHook(r, background[i]!.list, deps.telemetry));
      deps.onAsync(traceId, results, phase);
    },
    () => undefined,
  );
}

function stageOf(hooks: readonly HookSpec[], deps: HookStageDeps): RequestStage {
  const sync = hooks.filter((h) => !h.async);
  return { sync, background: hooks.filter((h) => h.async), allSync: sync.every(runsSync), deps };
}

/**
 * What a request stage does with one context (`req`, its request as the stage found it) before its
 * sync hooks: their input, or undefined when the request passes untouched.
 */
function start(stage: RequestStage, ctx: HookedRequest, req: HookedRequest['request']): CheckInput | undefined {
  if (req.endpoint === 'models' || !req.body) return undefined;
  const input = requestInput({ endpoint: req.endpoint as CheckEndpoint, body: req.body, metadata: ctx.metadata, headers: req.headers, traceId: ctx.traceId });
  if (stage.background.length > 0) runInBackground(stage.background, input, stage.deps, ctx.traceId, 'request');
  return stage.sync.length === 0 ? undefined : input;
}

/**
 * The body the sync hooks left becomes the request's, when they changed the one they were given
 * (`req`: compared with that, not with the context's request now, which another stage sharing the
 * context, a race's contender, may have changed meanwhile).
 */
function settle(ctx: HookedRequest, req: HookedRequest['request'], body: Record<string, unknown>): void {
  if (body !== req.body) ctx.request = { ...req, body };
}

/**
 * A request stage whose hooks all compute (no webhook, log or JWKS lookup), as a plain function: it
 * runs them on the context at once and throws the 446; the plan calls it without an Observable per
 * request. Undefined when a sync hook may wait on I/O (use `requestHooks`).
 */
export function requestHooksNow<C extends HookedRequest>(hooks: readonly HookSpec[], deps: HookStageDeps): ((ctx: C) => void) | undefined {
  return runsNow<C>(stageOf(hooks, deps));
}

/** `requestHooksNow` of a stage already sorted. */
function runsNow<C extends HookedRequest>(stage: RequestStage): ((ctx: C) => void) | undefined {
  if (!stage.allSync) return undefined;
  return (ctx) => {
    const req = ctx.request;
    const input = start(stage, ctx, req);
    if (input) settle(ctx, req, runNow(stage, input, accountOf(ctx)));
  };
}

/**
 * A request stage: input guardrails or before hooks, run in order on the request before the cache
 * lookup and the upstream call. A hook that denies ends the request with 446 (the provider is not
 * called, nothing is cached); a failed check without deny marks the answer 246; a mutator's change
 * replaces the request body (so the cache key and the provider see it). Async hooks run beside the
 * request and never change it. Endpoints without a body (models) pass untouched.
 *
 * What can be is decided once per plan (which hooks are sync, whether any waits on I/O); per request
 * the stage makes one check input and, for computation checks only, no promise: those run as
 * `requestHooksNow` does (the plan calls that one directly).
 */
export function requestHooks<C extends HookedRequest>(hooks: readonly HookSpec[], deps: HookStageDeps): MonoTypeOperatorFunction<C> {
  const stage = stageOf(hooks, deps);
  const now = runsNow<C>(stage);
  if (now) {
    return map((ctx) => {
      now(ctx);
      return ctx;
    });
  }
  return (ctx$: Observable<C>) =>
    new Observable<C>((subscriber) => {
      let pending = 0;
      let ended = false;
      return ctx$.subscribe({
        next(ctx) {
          const req = ctx.request;
          const input = start(stage, ctx, req);
          if (!input) return subscriber.next(ctx);
          pending++;
          runLater(stage, input, accountOf(ctx)).then(
            (body) => {
              settle(ctx, req, body);
              subscriber.next(ctx);
              if (--pending === 0 && ended) subscriber.complete();
            },
            (e: unknown) => subscriber.error(e),
          );
        },
        error: (e: unknown) => subscriber.error(e),
        complete() {
          ended = true;
          if (pending === 0) subscriber.complete();
        },
      });
    });
}
