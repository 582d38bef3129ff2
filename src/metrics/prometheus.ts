import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CircuitStatus, Transition } from '../state/breaker-store.js';
import type { Endpoint, Usage } from '../providers/types.js';
import type { Outcome, TargetLabels, Telemetry } from './telemetry.js';

/** OpenTelemetry GenAI operation names for our endpoints. */
const OPERATION: Record<Endpoint, string> = {
  chat: 'chat',
  completions: 'text_completion',
  embeddings: 'embeddings',
  models: 'models',
};

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];
const CIRCUIT_STATES: readonly CircuitStatus[] = ['closed', 'open', 'half-open'];

const statusClass = (status: number): string => (status === 0 ? 'transport' : `${Math.floor(status / 100)}xx`);

/**
 * Every metric, defined once. Built per app on its own registry (never the global one). Target labels
 * are config names or JSON paths; as inline configs can name targets freely, distinct target label
 * values are capped and the rest reported as "other", so a client cannot blow up cardinality.
 */
export class PrometheusTelemetry implements Telemetry {
  readonly registry = new Registry();
  private readonly seenTargets = new Set<string>();

  private readonly targetRequests = new Counter({
    name: 'sluice_target_requests_total',
    help: 'Upstream attempts per target, by outcome and status class.',
    labelNames: ['target', 'provider', 'endpoint', 'outcome', 'status_class'] as const,
    registers: [this.registry],
  });
  private readonly operationDuration = new Histogram({
    name: 'gen_ai_client_operation_duration_seconds',
    help: 'Upstream attempt duration per target (to the complete response or end of stream).',
    labelNames: ['target', 'gen_ai_system', 'gen_ai_operation_name', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly ttft = new Histogram({
    name: 'gen_ai_server_time_to_first_token_seconds',
    help: 'Time from the upstream call to the first streamed chunk, per target.',
    labelNames: ['target', 'gen_ai_system', 'gen_ai_operation_name'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly tokenUsage = new Counter({
    name: 'gen_ai_client_token_usage_total',
    help: 'Tokens reported by the provider, per target and token type (input, output).',
    labelNames: ['target', 'gen_ai_system', 'gen_ai_token_type'] as const,
    registers: [this.registry],
  });
  private readonly retries = new Counter({
    name: 'sluice_target_retries_total',
    help: 'Retries made per target.',
    labelNames: ['target', 'provider'] as const,
    registers: [this.registry],
  });
  private readonly fallbacks = new Counter({
    name: 'sluice_fallbacks_total',
    help: 'Times a fallback node moved past a failed child.',
    labelNames: ['node', 'from'] as const,
    registers: [this.registry],
  });
  private readonly circuitState = new Gauge({
    name: 'sluice_circuit_state',
    help: 'Circuit state per target: 1 for the current state, 0 for the others.',
    labelNames: ['target', 'state'] as const,
    registers: [this.registry],
  });
  private readonly circuitTransitions = new Counter({
    name: 'sluice_circuit_transitions_total',
    help: 'Circuit state changes per target.',
    labelNames: ['target', 'from', 'to'] as const,
    registers: [this.registry],
  });
  private readonly inFlight = new Gauge({
    name: 'sluice_target_in_flight_requests',
    help: 'Upstream attempts in flight per target.',
    labelNames: ['target', 'provider'] as const,
    registers: [this.registry],
  });
  private readonly requestDuration = new Histogram({
    name: 'sluice_request_duration_seconds',
    help: 'Whole request duration as the client sees it.',
    labelNames: ['endpoint', 'status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly overhead = new Histogram({
    name: 'sluice_gateway_overhead_seconds',
    help: 'Request duration minus the time spent waiting on upstreams: what the gateway itself adds.',
    labelNames: ['endpoint'] as const,
    buckets: OVERHEAD_BUCKETS,
    registers: [this.registry],
  });

  private readonly cacheLookups = new Counter({
    name: 'sluice_cache_lookups_total',
    help: 'Cache lookups by mode (simple, semantic) and result (HIT, SEMANTIC_HIT, MISS, REFRESH, DISABLED).',
    labelNames: ['mode', 'result'] as const,
    registers: [this.registry],
  });
  private readonly storeErrors = new Counter({
    name: 'sluice_store_errors_total',
    help: 'Failed state store operations (the store was unreachable or answered an error).',
    labelNames: ['store', 'operation'] as const,
    registers: [this.registry],
  });
  private readonly storeLatency = new Histogram({
    name: 'sluice_store_operation_duration_seconds',
    help: 'State store operation duration.',
    labelNames: ['store', 'operation'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    registers: [this.registry],
  });

  constructor(
    private readonly maxTargets = 500,
    defaultMetrics = true,
  ) {
    if (defaultMetrics) {
      collectDefaultMetrics({ register: this.registry });
      // prom-client's gauges named *_total fail `promtool check metrics`; each is the sum of its
      // per-type sibling (nodejs_active_handles, ...), which stays.
      for (const n of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
        this.registry.removeSingleMetric(n);
      }
    }
  }

  private target(name: string): string {
    if (this.seenTargets.has(name)) return name;
    if (this.seenTargets.size >= this.maxTargets) return 'other';
    this.seenTargets.add(name);
    return name;
  }

  targetStarted(t: TargetLabels): void {
    this.inFlight.inc({ target: this.target(t.target), provider: t.provider });
  }

  targetFinished(t: TargetLabels, outcome: Outcome, status: number, seconds: number): void {
    const target = this.target(t.target);
    this.inFlight.dec({ target, provider: t.provider });
    this.targetRequests.inc({ target, provider: t.provider, endpoint: t.endpoint, outcome, status_class: statusClass(status) });
    this.operationDuration.observe({ target, gen_ai_system: t.provider, gen_ai_operation_name: OPERATION[t.endpoint], outcome }, seconds);
  }

  timeToFirstToken(t: TargetLabels, seconds: number): void {
    this.ttft.observe({ target: this.target(t.target), gen_ai_system: t.provider, gen_ai_operation_name: OPERATION[t.endpoint] }, seconds);
  }

  tokens(t: TargetLabels, usage: Usage): void {
    const target = this.target(t.target);
    this.tokenUsage.inc({ target, gen_ai_system: t.provider, gen_ai_token_type: 'input' }, usage.prompt_tokens);
    this.tokenUsage.inc({ target, gen_ai_system: t.provider, gen_ai_token_type: 'output' }, usage.completion_tokens);
  }

  retry(t: TargetLabels): void {
    this.retries.inc({ target: this.target(t.target), provider: t.provider });
  }

  fallback(node: string, from: string): void {
    this.fallbacks.inc({ node: this.target(node), from: this.target(from) });
  }

  circuit(targetName: string, status: CircuitStatus, transition?: Transition): void {
    const target = this.target(targetName);
    for (const s of CIRCUIT_STATES) this.circuitState.set({ target, state: s }, s === status ? 1 : 0);
    if (transition) this.circuitTransitions.inc({ target, from: transition.from, to: transition.to });
  }

  cacheLookup(mode: string, result: string): void {
    this.cacheLookups.inc({ mode, result });
  }

  storeOperation(store: string, operation: string, seconds: number, ok: boolean): void {
    this.storeLatency.observe({ store, operation }, seconds);
    if (!ok) this.storeErrors.inc({ store, operation });
  }

  request(endpoint: string, status: number, totalSeconds: number, overheadSeconds: number): void {
    this.requestDuration.observe({ endpoint, status_class: statusClass(status) }, totalSeconds);
    this.overhead.observe({ endpoint }, Math.max(0, overheadSeconds));
  }
}
