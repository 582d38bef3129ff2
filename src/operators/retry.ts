import { defer, retry, tap, throwError, timer, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import { retryAfterMs } from './retry-after.js';

/** 529: Anthropic's "overloaded", which a Messages client gets as it is (src/providers/anthropic/from-provider.ts). */
export const DEFAULT_RETRY_CODES: readonly number[] = [429, 500, 502, 503, 504, 529];
export const MAX_RETRY_ATTEMPTS = 10;

/** Errors that came from trying the upstream; gateway decisions (open circuit, bad config) are not. */
const RETRYABLE = new Set(['hooks_failed', 'upstream_error', 'upstream_unreachable', 'upstream_invalid_response', 'stream_interrupted', 'request_timeout', 'upstream_timeout']);

export interface RetryOptions {
  attempts: number;
  onStatusCodes?: readonly number[];
  useRetryAfterHeaders?: boolean;
  /** First backoff, doubled per retry; capped at maxDelayMs; up to 25% jitter taken off. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Time left in the request's budget: a retry that would wait past it is not made. */
  budgetLeftMs?: () => number;
  now: () => number;
  random?: () => number;
  onRetry?: (retryNumber: number, delayMs: number, error: unknown) => void;
  scheduler?: SchedulerLike;
}

export function retryDelayMs(err: unknown, retryNumber: number, o: RetryOptions): number {
  if (o.useRetryAfterHeaders && err instanceof GatewayError) {
    const suggested = retryAfterMs(err.headers, o.now());
    if (suggested !== undefined) return suggested;
  }
  const base = o.baseDelayMs ?? 500;
  const cap = o.maxDelayMs ?? 8000;
  const backoff = Math.min(cap, base * 2 ** (retryNumber - 1));
  return backoff * (1 - 0.25 * (o.random ?? Math.random)());
}

/**
 * Retry a target's attempt: `attempts` extra tries for the status codes given (default 429, 5xx
 * gateway set), with exponential backoff and jitter or the provider's Retry-After, never after the
 * first value was emitted (a stream already reaching the client) and never past the time budget.
 */
export function retryWithBackoff<T>(o: RetryOptions): MonoTypeOperatorFunction<T> {
  if (!Number.isInteger(o.attempts) || o.attempts < 0 || o.attempts > MAX_RETRY_ATTEMPTS) {
    throw new Error(`retry.attempts must be an integer from 0 to ${MAX_RETRY_ATTEMPTS}, got ${o.attempts}`);
  }
  if (o.attempts === 0) return (source) => source;
  const codes = o.onStatusCodes && o.onStatusCodes.length > 0 ? o.onStatusCodes : DEFAULT_RETRY_CODES;
  const budgetLeftMs = o.budgetLeftMs;
  return (source) =>
    defer(() => {
      let emitted = false;
      return source.pipe(
        tap(() => {
          emitted = true;
        }),
        retry({
          count: o.attempts,
          delay: (err: unknown, retryNumber: number) => {
            const retryable = !emitted && err instanceof GatewayError && RETRYABLE.has(err.code) && codes.includes(err.status);
            if (!retryable) return throwError(() => err);
            const wait = retryDelayMs(err, retryNumber, o);
            if (budgetLeftMs && wait > budgetLeftMs()) return throwError(() => err);
            o.onRetry?.(retryNumber, wait, err);
            return o.scheduler ? timer(wait, o.scheduler) : timer(wait);
          },
        }),
      );
    });
}
