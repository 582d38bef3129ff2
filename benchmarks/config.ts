/**
 * The benchmark's settings, read once from the environment (BENCH_QUICK, BENCH_REPS, BENCH_REDIS_URL,
 * BENCH_LIMITS_REDIS_URL, BENCH_NO_REDIS, BENCH_QUIET_WAIT_S, BENCH_HARD_LIMIT_S), and the request bodies every scenario sends.
 */
import path from 'node:path';
import { BENCH_DIR } from './lib.js';

export const QUICK = process.env.BENCH_QUICK === '1';
export const REPS = Math.max(1, Number(process.env.BENCH_REPS ?? 3));
export const CFG = {
  quick: QUICK,
  reps: REPS,
  /** Reps of the routing and cache scenarios: BENCH_REPS, but at most 2 in a quick run. */
  laterReps: process.env.BENCH_REPS || !QUICK ? REPS : Math.min(2, REPS),
  cpu: { gateway: '0', load: '1' },
  apiKey: 'sk-sluice-bench-0123456789abcdef',
  logLevel: 'info',
  sideLogLevel: 'warn',
  throughput: { connections: 64, durationS: QUICK ? 5 : 10, warmupS: QUICK ? 2 : 3 },
  /**
   * fixed-rate: closedWarmupS of closed-loop load (autocannon, throughput.connections) on each
   * contender first, so the gateway is JIT-warm even when this scenario runs alone, then warmupS of
   * the fixed-rate load itself.
   */
  fixedRate: { connections: 32, maxPauseMs: 64, threads: 1, durationS: QUICK ? 3 : 8, warmupS: 2, closedWarmupS: QUICK ? 2 : 3 },
  streams: { chunks: 20, pacedIntervalMs: 5, b2bRequests: QUICK ? 100 : 200, pacedRequests: QUICK ? 30 : 200, warmup: 20 },
  /**
   * provider-streams: streamed chat through the gateway to openai, anthropic and bedrock (back to back),
   * requests per contender over all reps (enough CPU ticks per rep for a CPU-per-stream figure).
   */
  providerStreams: { chunks: 20, requests: QUICK ? 900 : 2400, warmup: 50 },
  /** routing-overhead: closed-loop throughput and wrk fixed rate per routing config (same gateway). */
  routing: { throughputS: QUICK ? 2 : 3, fixedRateS: QUICK ? 2 : 4, warmupS: QUICK ? 1 : 2, hedgeAfterMs: 50 },
  /**
   * guardrails: the same single-target config with and without input + output guardrails. Saturation:
   * `pairs` alternating windows of `windowS` per config on each rep's own gateway process.
   */
  guardrails: { windowS: 1, pairs: QUICK ? 4 : 8, fixedRateS: QUICK ? 2 : 4, warmupS: QUICK ? 2 : 3 },
  /** routing-experiment: open-loop fixed rate, one healthy and one bad target. */
  experiment: { rate: 200, durationS: QUICK ? 3 : 10, slowMs: 200, flakyPercent: 50, hedgeAfterMs: 50 },
  /** cache: closed-loop throughput of cache hits vs uncached vs direct, memory store and Redis. */
  cache: {
    throughputS: QUICK ? 2 : 3,
    warmupS: QUICK ? 1 : 2,
    maxAgeS: 600,
    redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/15',
    redis: process.env.BENCH_NO_REDIS !== '1',
  },
  /**
   * usage-limits: the same request with one active tokens policy vs archived, on one gateway with
   * Redis (db 14 by default: flushed before and after).
   */
  usageLimits: {
    throughputS: QUICK ? 3 : 5,
    warmupS: QUICK ? 2 : 3,
    redisUrl: process.env.BENCH_LIMITS_REDIS_URL ?? 'redis://127.0.0.1:6379/14',
  },
  /** semantic: MemoryVectorIndex lookups (benchmarks/semantic-lookup.ts) in a pinned child process. */
  semantic: { sizes: [1_000, 10_000, 100_000], searches: QUICK ? 1_000 : 2_000, dims: 256 },
  /** Before each measured run, wait up to this long for other processes on the machine to go quiet (0 = don't). */
  quietWaitS: Number(process.env.BENCH_QUIET_WAIT_S ?? 0),
  /** Bound on the whole run; the run aborts (children stopped) past it. */
  hardLimitS: Number(process.env.BENCH_HARD_LIMIT_S ?? (QUICK ? 300 : 900)),
};
export const CHAT_BODY = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]}';
export const STREAM_BODY = '{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hello"}]}';
export const FIXED_RATE_LUA = path.join(BENCH_DIR, 'fixed-rate.lua');
