import { Registry } from 'prom-client';
import { CounterFamily, GaugeFamily, HistogramFamily, type CounterCell, type GaugeCell, type HistogramCell } from './series.js';
import type { CircuitStatus, Transition } from '../state/breaker-store.js';
import type { Endpoint, Usage } from '../config/wire.js';
import type { Outcome, TargetLabels } from './telemetry.js';

/** OpenTelemetry GenAI operation names for our endpoints (metrics and spans). */
export const OPERATION: Record<Endpoint, string> = {
  chat: 'chat',
  completions: 'text_completion',
  embeddings: 'embeddings',
  models: 'models',
  responses: 'chat',
  messages: 'chat',
  count_tokens: 'count_tokens',
};

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];
const CIRCUIT_STATES: readonly CircuitStatus[] = ['closed', 'open', 'half-open'];
const CIRCUIT_TRANSITIONS: readonly (readonly [CircuitStatus, CircuitStatus])[] = [
  ['closed', 'open'],
  ['open', 'half-open'],
  ['half-open', 'closed'],
  ['half-open', 'open'],
];

/** Slot of a status class in a per-class array: 0 for transport, 1-9 for 1xx-9xx, 10 for anything else. */
const classSlot = (status: number): number => (status === 0 ? 0 : status >= 100 && status < 1000 ? Math.floor(status / 100) : 10);
const statusClass = (status: number): string => {
  const slot = classSlot(status);
  return slot === 0 ? 'transport' : slot === 10 ? 'other' : `${slot}xx`;
};
const OUTCOMES: readonly Outcome[] = ['success', 'error', 'timeout', 'cancelled', 'circuit_open'];
const OUTCOME_SLOT: Record<Outcome, number> = { success: 0, error: 1, timeout: 2, cancelled: 3, circuit_open: 4 };

/** `value` while fewer than `max` distinct values were seen, else `other`: a label a client cannot blow up. */
export function bounded(seen: Set<string>, value: string, max: number): string {
  if (seen.has(value)) return value;
  if (seen.size >= max) return 'other';
  seen.add(value);
  return value;
}

/** The series of one target (labels object), bound on its first use. */
interface TargetCells {
  target: string;
  inFlight: GaugeCell;
  /** [outcome slot * 11 + status class slot] */
  requests: (CounterCell | undefined)[];
  /** [outcome slot] */
  duration: (HistogramCell | undefined)[];
  ttft?: HistogramCell;
  tokensIn?: CounterCell;
  tokensOut?: CounterCell;
  retries?: CounterCell;
}

/** The series of one endpoint's gateway-wide request metrics. */
interface EndpointCells {
  /** [status class slot] */
  duration: (HistogramCell | undefined)[];
  overhead: HistogramCell;
}

/**
 * The metrics of upstream attempts (per target) and of whole requests (per endpoint), on their own
 * registry. Target labels are config names or JSON paths; as inline configs can name targets freely,
 * distinct target label values are capped (`maxTargets`) and the rest reported as "other", so a
 * client cannot blow up cardinality.
 *
 * The per-request updates go to series cells bound once per target labels object (plans are cached,
 * so once per target) and per endpoint: no label hashing and no allocation on the hot path.
 */
export class TargetMetrics {
  readonly registry = new Registry();
  private readonly seenTargets = new Set<string>();
  private readonly targetCells = new WeakMap<TargetLabels, TargetCells>();
  private readonly endpointCells = new Map<string, EndpointCells>();
  private readonly seenCircuits = new Set<string>();

  private readonly targetRequests = new CounterFamily(
    'sluice_target_requests_total',
    'Upstream attempts per target, by outcome and status class.',
    ['target', 'provider', 'endpoint', 'outcome', 'status_class'],
    this.registry,
  );
  private readonly operationDuration = new HistogramFamily(
    'gen_ai_client_operation_duration_seconds',
    'Upstream attempt duration per target (to the complete response or end of stream).',
    ['target', 'gen_ai_system', 'gen_ai_operation_name', 'outcome'],
    LATENCY_BUCKETS,
    this.registry,
  );
  private readonly ttft = new HistogramFamily(
    'gen_ai_server_time_to_first_token_seconds',
    'Time from the upstream call to the first streamed chunk, per target.',
    ['target', 'gen_ai_system', 'gen_ai_operation_name'],
    LATENCY_BUCKETS,
    this.registry,
  );
  private readonly tokenUsage = new CounterFamily(
    'gen_ai_client_token_usage_total',
    'Tokens reported by the provider, per target and token type (input, output).',
    ['target', 'gen_ai_system', 'gen_ai_token_type'],
    this.registry,
  );
  private readonly retries = new CounterFamily('sluice_target_retries_total', 'Retries made per target.', ['target', 'provider'], this.registry);
  private readonly fallbacks = new CounterFamily('sluice_fallbacks_total', 'Times a fallback node moved past a failed child.', ['node', 'from'], this.registry);
  private readonly circuitState = new GaugeFamily(
    'sluice_circuit_state',
    'Circuit state per target: 1 for the current state, 0 for the others.',
    ['target', 'state'],
    this.registry,
  );
  private readonly circuitTransitions = new CounterFamily('sluice_circuit_transitions_total', 'Circuit state changes per target.', ['target', 'from', 'to'], this.registry);
  private readonly inFlight = new GaugeFamily('sluice_target_in_flight_requests', 'Upstream attempts in flight per target.', ['target', 'provider'], this.registry);
  private readonly requestDuration = new HistogramFamily(
    'sluice_request_duration_seconds',
    'Whole request duration as the client sees it.',
    ['endpoint', 'status_class'],
    LATENCY_BUCKETS,
    this.registry,
  );
  private readonly overhead = new HistogramFamily(
    'sluice_gateway_overhead_seconds',
    'Request duration minus the time spent waiting on upstreams: what the gateway itself adds.',
    ['endpoint'],
    OVERHEAD_BUCKETS,
    this.registry,
  );

  constructor(protected readonly maxTargets: number) {}

  protected target(name: string): string {
    return bounded(this.seenTargets, name, this.maxTargets);
  }

  private cells(t: TargetLabels): TargetCells {
    let c = this.targetCells.get(t);
    if (!c) {
      const target = this.target(t.target);
      c = { target, inFlight: this.inFlight.cell(target, t.provider), requests: [], duration: [] };
      this.targetCells.set(t, c);
    }
    return c;
  }

  targetStarted(t: TargetLabels): void {
    this.cells(t).inFlight.inc();
  }

  targetFinished(t: TargetLabels, outcome: Outcome, status: number, seconds: number, traceId?: string): void {
    const c = this.cells(t);
    c.inFlight.dec();
    const o = OUTCOME_SLOT[outcome];
    const r = o * 11 + classSlot(status);
    (c.requests[r] ??= this.targetRequests.cell(c.target, t.provider, t.endpoint, OUTCOMES[o]!, statusClass(status))).inc();
    (c.duration[o] ??= this.operationDuration.cell(c.target, t.provider, OPERATION[t.endpoint], OUTCOMES[o]!)).observe(seconds, traceId);
  }

  timeToFirstToken(t: TargetLabels, seconds: number, traceId?: string): void {
    const c = this.cells(t);
    (c.ttft ??= this.ttft.cell(c.target, t.provider, OPERATION[t.endpoint])).observe(seconds, traceId);
  }

  tokens(t: TargetLabels, usage: Usage): void {
    const c = this.cells(t);
    (c.tokensIn ??= this.tokenUsage.cell(c.target, t.provider, 'input')).inc(usage.prompt_tokens);
    (c.tokensOut ??= this.tokenUsage.cell(c.target, t.provider, 'output')).inc(usage.completion_tokens);
  }

  retry(t: TargetLabels): void {
    const c = this.cells(t);
    (c.retries ??= this.retries.cell(c.target, t.provider)).inc();
  }

  fallback(node: string, from: string): void {
    this.fallbacks.cell(this.target(node), this.target(from)).inc();
  }

  circuit(targetName: string, status: CircuitStatus, transition?: Transition): void {
    const target = this.target(targetName);
    if (!this.seenCircuits.has(target)) {
      // Every transition a circuit can make, at 0 from the start: a counter series that first appears
      // at 1 shows no increase to rate(), so the first opening would never be charted.
      this.seenCircuits.add(target);
      for (const [from, to] of CIRCUIT_TRANSITIONS) this.circuitTransitions.cell(target, from, to);
    }
    for (const s of CIRCUIT_STATES) this.circuitState.cell(target, s).set(s === status ? 1 : 0);
    if (transition) this.circuitTransitions.cell(target, transition.from, transition.to).inc();
  }

  request(endpoint: string, status: number, totalSeconds: number, overheadSeconds: number, traceId?: string): void {
    let e = this.endpointCells.get(endpoint);
    if (!e) {
      e = { duration: [], overhead: this.overhead.cell(endpoint) };
      this.endpointCells.set(endpoint, e);
    }
    (e.duration[classSlot(status)] ??= this.requestDuration.cell(endpoint, statusClass(status))).observe(totalSeconds, traceId);
    e.overhead.observe(Math.max(0, overheadSeconds));
  }
}
