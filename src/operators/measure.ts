import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import type { Outcome, TargetLabels, Telemetry } from '../metrics/telemetry.js';
import type { AnswerMeta, GatewayEvent } from '../upstream/events.js';
import type { Spent } from './accounting.js';

/**
 * The part of a request's context that measuring an attempt keeps: the union of time with at least one
 * upstream call in flight (for the gateway-overhead figure), and the target that failed last. The
 * pipeline's RequestContext is one.
 */
export interface AttemptAccount {
  upstreamActive: number;
  upstreamSince: number;
  upstreamMs: number;
  failed?: AnswerMeta;
  /** Every attempt that answered (a JSON body, or a stream's start), with the usage it reported. */
  spent?: Spent[];
}

function upstreamBegin(a: AttemptAccount, now: number): void {
  if (a.upstreamActive++ === 0) a.upstreamSince = now;
}

function upstreamEnd(a: AttemptAccount, now: number): void {
  if (--a.upstreamActive === 0) a.upstreamMs += now - a.upstreamSince;
}

function outcomeOf(err: unknown): [Outcome, number] {
  if (!(err instanceof GatewayError)) return ['error', 0];
  if (err.code === 'request_timeout') return ['timeout', 408];
  if (err.code === 'upstream_timeout') return ['timeout', 504];
  if (err.code === 'circuit_open') return ['circuit_open', 503];
  if (err.code === 'upstream_unreachable') return ['error', 0];
  return ['error', err.status];
}

/**
 * Taps one upstream attempt for metrics: in flight, outcome and status, duration, time to first
 * token, tokens; and keeps the request's account: upstream wait (for the gateway-overhead figure),
 * the attempt and its usage once it answers (`ctx.spent`: what the request costs and counts against
 * usage limits, retries and fallbacks included) and, when the attempt fails, `meta` as the target
 * that failed last (`ctx.failed`).
 */
export function measure(
  labels: TargetLabels,
  telemetry: Telemetry,
  ctx: AttemptAccount,
  now: () => number,
  meta?: AnswerMeta,
): MonoTypeOperatorFunction<GatewayEvent> {
  // One Observable per attempt (not defer + tap): this runs on every request.
  return (source) =>
    new Observable<GatewayEvent>((subscriber) => {
      const start = now();
      let first = true;
      let finished = false;
      let status = 200;
      let spent: Spent | undefined;
      try {
        telemetry.targetStarted(labels);
      } catch {
        // a metrics failure never fails the request
      }
      upstreamBegin(ctx, start);
      const finish = (outcome: Outcome, code: number): void => {
        if (finished) return;
        finished = true;
        const t = now();
        upstreamEnd(ctx, t);
        try {
          telemetry.targetFinished(labels, outcome, code, (t - start) / 1000);
        } catch {
          // a metrics failure never fails or hangs the request
        }
      };
      const sub = source.subscribe({
        next: (ev) => {
          if (ev.type === 'json') status = ev.status;
          const usage = ev.type === 'stream-start' ? undefined : ev.usage;
          if (meta && !spent) {
            spent = usage ? { meta, usage } : { meta };
            (ctx.spent ??= []).push(spent);
          } else if (spent && usage) {
            spent.usage = usage;
            spent.cost = undefined; // priced again from the new usage
          }
          try {
            if (first) {
              first = false;
              if (ev.type === 'stream-start') telemetry.timeToFirstToken(labels, (now() - start) / 1000);
            }
            if (usage) telemetry.tokens(labels, usage);
          } catch {
            // a metrics failure never fails the request
          }
          subscriber.next(ev);
        },
        error: (e: unknown) => {
          if (meta) ctx.failed = meta;
          finish(...outcomeOf(e));
          subscriber.error(e);
        },
        complete: () => {
          finish('success', status);
          subscriber.complete();
        },
      });
      return () => {
        sub.unsubscribe();
        finish('cancelled', 0);
      };
    });
}
