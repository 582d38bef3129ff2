/**
 * What a fake provider does with one call, decided from the experiment's seed, the provider, the
 * client request the call serves and how many calls of that request this provider has seen: so a
 * request meets the same latency and the same faults on a provider under every config.
 */
import { hash32, mulberry32, sampleLatency } from './random.js';
import type { Fault, ProviderSpec } from './schema.js';

export type CallPlan =
  /** The connection is reset before an answer. */
  | { kind: 'reset' }
  | { kind: 'status'; status: number; retryAfterS?: number }
  /** Answer after `latencyMs` (a stream's first chunk then); `cut`: a stream stops halfway. */
  | { kind: 'answer'; latencyMs: number; cut: boolean };

const active = (faults: readonly Fault[], tS: number): Fault[] => faults.filter((f) => tS >= f.start_s && tS < f.end_s);

/** The plan of call number `occurrence` (0, 1, ...) of request `key` to provider `name`, `tS` seconds into the run. */
export function planCall(seed: number, name: string, spec: ProviderSpec, key: string, occurrence: number, tS: number): CallPlan {
  const rng = mulberry32(hash32(seed, name, key, occurrence));
  // Draw every number first, in a fixed order, so a fault window never shifts the draws after it.
  const uBrownout = rng();
  const uError = rng();
  const uCut = rng();
  let latencyMs = sampleLatency(spec.latency, rng);
  for (const f of active(spec.faults, tS)) {
    if (f.kind === 'outage') return f.status === undefined ? { kind: 'reset' } : { kind: 'status', status: f.status };
    if (f.kind === 'rate_limit') return { kind: 'status', status: 429, retryAfterS: f.retry_after_s };
    if (uBrownout < f.error_rate) return { kind: 'status', status: 503 };
    latencyMs *= f.latency_factor;
  }
  if (uError < spec.error_rate) return { kind: 'status', status: spec.error_status };
  return { kind: 'answer', latencyMs, cut: uCut < spec.stream.cut_rate };
}
