import { from, mergeMap, of, throwError, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import { runHook, runHookSync, runsSync, type HookAccount, type HookResult, type HookRun, type HookSpec } from '../checks/hooks.js';
import { requestInput } from '../checks/text.js';
import type { CheckDeps, CheckEndpoint } from '../checks/types.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Telemetry } from '../metrics/telemetry.js';
import { hookResultsBody } from '../checks/hooks.js';

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
 * The 446. A denied answer is never quoted, not even in a check's `data`: the built-in checks report
 * counts, offsets and configured words only, and the data of checks answered from outside (a webhook)
 * is left out of an answer's denial.
 */
export function deniedError(account: HookAccount, phase: 'request' | 'answer'): GatewayError {
  let results = hookResultsBody(account);
  if (phase === 'answer') {
    const scrub = (h: HookAccount['after'][number]) =>
      h.checks.some((c) => FOREIGN_DATA.has(c.id) && c.data !== undefined && c.data !== null)
        ? { ...h, checks: h.checks.map((c) => (FOREIGN_DATA.has(c.id) ? { ...c, data: null } : c)) }
        : h;
    results = { before_request_hooks: results.before_request_hooks, after_request_hooks: results.after_request_hooks.map(scrub) };
  }
  return new GatewayError('hooks_failed', phase === 'request' ? 'A guardrail or hook denied the request.' : 'A guardrail or hook denied the answer.', {
    extra: { hook_results: results },
  });
}

/**
 * A request stage: input guardrails or before hooks, run in order on the request before the cache
 * lookup and the upstream call. A hook that denies ends the request with 446 (the provider is not
 * called, nothing is cached); a failed check without deny marks the answer 246; a mutator's change
 * replaces the request body (so the cache key and the provider see it). Async hooks run beside the
 * request and never change it. Endpoints without a body (models) pass untouched.
 */
export function requestHooks<C extends HookedRequest>(hooks: readonly HookSpec[], deps: HookStageDeps): MonoTypeOperatorFunction<C> {
  const sync = hooks.filter((h) => !h.async);
  const background = hooks.filter((h) => h.async);
  const allSync = sync.every(runsSync);
  return (ctx$: Observable<C>) =>
    ctx$.pipe(
      mergeMap((ctx) => {
        const req = ctx.request;
        if (req.endpoint === 'models' || !req.body) return of(ctx);
        const endpoint = req.endpoint as CheckEndpoint;
        const rebuild = (body: Record<string, unknown> | undefined) =>
          requestInput({ endpoint, body, metadata: ctx.metadata, headers: req.headers, traceId: ctx.traceId });
        if (background.length > 0) {
          const input = rebuild(req.body);
          void Promise.all(background.map((h) => runHook(h, input, deps.checks, rebuild))).then(
            (runs) => {
              runs.forEach((r, i) => measureHook(r.result, background[i]!.list, deps.telemetry));
              deps.onAsync(
                ctx.traceId,
                runs.map((r) => ({ ...r.result, deny: false })),
                'request',
              );
            },
            () => undefined,
          );
        }
        if (sync.length === 0) return of(ctx);
        const account = accountOf(ctx);
        let body = req.body;
        /** One hook's run taken into the account; throws the 446. */
        const take = (h: HookSpec, run: HookRun): void => {
          account.before.push(run.result);
          measureHook(run.result, h.list, deps.telemetry);
          if (run.result.deny) throw deniedError(account, 'request');
          if (!run.result.verdict) account.failed = true;
          if (run.transformed?.request) body = run.transformed.request.body;
        };
        const done = (): C => {
          if (body !== req.body) ctx.request = { ...req, body };
          return ctx;
        };
        if (allSync) {
          // Computation checks only: at once, no promise.
          try {
            for (const h of sync) take(h, runHookSync(h, rebuild(body), deps.checks, rebuild));
          } catch (e) {
            return throwError(() => e);
          }
          return of(done());
        }
        return from(
          (async () => {
            for (const h of sync) take(h, await runHook(h, rebuild(body), deps.checks, rebuild));
            return done();
          })(),
        );
      }),
    );
}
