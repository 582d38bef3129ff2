import { collectDefaultMetrics, Registry } from 'prom-client';
import { CounterFamily, GaugeFamily, HistogramFamily, type CounterCell, type GaugeCell, type HistogramCell } from './series.js';
import type { CircuitStatus, Transition } from '../state/breaker-store.js';
import type { Endpoint, Usage } from '../config/wire.js';
import type { Outcome, TargetLabels, Telemetry } from './telemetry.js';

/** OpenTelemetry GenAI operation names for our endpoints. */
const OPERATION: Record<Endpoint, string> = {
  chat: 'chat',
  completions: 'text_completion',
  embeddings: 'embeddings',
  models: 'models',
  responses: 'chat',
  messages: 'chat',
};

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];
const CIRCUIT_STATES: readonly CircuitStatus[] = ['closed', 'open', 'half-open'];

/** Slot of a status class in a per-class array: 0 for transport, 1-9 for 1xx-9xx, 10 for anything else. */
const classSlot = (status: number): number => (status === 0 ? 0 : status >= 100 && status < 1000 ? Math.floor(status / 100) : 10);
const statusClass = (status: number): string => {
  const slot = classSlot(status);
  return slot === 0 ? 'transport' : slot === 10 ? 'other' : `${slot}xx`;
};
const OUTCOMES: readonly Outcome[] = ['success', 'error', 'timeout', 'cancelled', 'circuit_open'];
const OUTCOME_SLOT: Record<Outcome, number> = { success: 0, error: 1, timeout: 2, cancelled: 3, circuit_open: 4 };

/** Distinct policy ids reported before the rest become `other` (policies are created through an API). */
const POLICY_LABELS_MAX = 1000;

/** `value` while fewer than `max` distinct values were seen, else `other`: a label a client cannot blow up. */
function bounded(seen: Set<string>, value: string, max: number): string {
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
 * Every metric, defined once. Built per app on its own registry (never the global one). Target labels
 * are config names or JSON paths; as inline configs can name targets freely, distinct target label
 * values are capped and the rest reported as "other", so a client cannot blow up cardinality.
 *
 * The per-request updates go to series cells bound once per target labels object (plans are cached,
 * so once per target) and per endpoint: no label hashing and no allocation on the hot path.
 */
export class PrometheusTelemetry implements Telemetry {
  readonly registry = new Registry();
  private readonly seenTargets = new Set<string>();
  private readonly targetCells = new WeakMap<TargetLabels, TargetCells>();
  private readonly endpointCells = new Map<string, EndpointCells>();

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

  private readonly cacheLookups = new CounterFamily(
    'sluice_cache_lookups_total',
    'Cache lookups by mode (simple, semantic) and result (HIT, SEMANTIC_HIT, MISS, REFRESH, DISABLED).',
    ['mode', 'result'],
    this.registry,
  );
  private readonly storeErrors = new CounterFamily(
    'sluice_store_errors_total',
    'Failed state store operations (the store was unreachable or answered an error).',
    ['store', 'operation'],
    this.registry,
  );
  private readonly storeLatency = new HistogramFamily(
    'sluice_store_operation_duration_seconds',
    'State store operation duration.',
    ['store', 'operation'],
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    this.registry,
  );

  private readonly checks = new CounterFamily(
    'sluice_check_verdicts_total',
    'Guardrail and hook check runs by check id and verdict (pass, fail, error).',
    ['check', 'verdict'],
    this.registry,
  );
  private readonly checkLatency = new HistogramFamily(
    'sluice_check_duration_seconds',
    'Guardrail and hook check duration by check id.',
    ['check'],
    [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5],
    this.registry,
  );
  private readonly denials = new CounterFamily('sluice_hook_denials_total', 'Requests or answers denied (446) by hook id and list.', ['hook', 'list'], this.registry);
  private readonly feedbackCount = new CounterFamily('sluice_hook_feedback_total', 'Feedback recorded by hooks, by hook id.', ['hook'], this.registry);
  private readonly feedbackValue = new GaugeFamily(
    'sluice_hook_feedback_value_sum',
    'Sum of feedback value × weight recorded by hooks, by hook id (a gauge: values may be negative; divide by sluice_hook_feedback_total for the mean).',
    ['hook'],
    this.registry,
  );

  private readonly usageTokens = new CounterFamily(
    'sluice_usage_tokens_total',
    'Tokens of the requests answered, as the provider reported them, per gateway-key workspace, provider and token type (input, output).',
    ['workspace', 'provider', 'token_type'],
    this.registry,
  );
  private readonly usageCost = new CounterFamily(
    'sluice_usage_cost_usd_total',
    'Cost of the requests answered (USD, from the price table; unpriced models add nothing), per gateway-key workspace and provider.',
    ['workspace', 'provider'],
    this.registry,
  );
  private readonly limitRejections = new CounterFamily(
    'sluice_usage_limit_rejections_total',
    'Requests refused (412) by a usage-limit policy, per policy id.',
    ['policy'],
    this.registry,
  );
  private readonly limitAlerts = new CounterFamily(
    'sluice_usage_limit_alerts_total',
    'Usage-limit alerts (a group reached its alert_threshold; once per period and group), per policy id.',
    ['policy'],
    this.registry,
  );
  private readonly limitStoreErrors = new CounterFamily(
    'sluice_usage_limit_store_errors_total',
    'Requests under a usage-limit policy whose counters could not be reached: admitted without a reservation (fail open) or refused with 503 (fail closed).',
    ['outcome'],
    this.registry,
  );
  /** Usage cells per workspace, then provider: [input, output, cost]. */
  private readonly usageCells = new Map<string, Map<string, [CounterCell, CounterCell, CounterCell]>>();
  /** Check cells per check id: one per verdict and the latency histogram. */
  private readonly checkCells = new Map<string, { pass?: CounterCell; fail?: CounterCell; error?: CounterCell; latency: HistogramCell }>();
  private readonly seenWorkspaces = new Set<string>();
  private readonly seenPolicies = new Set<string>();

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

  check(checkId: string, verdict: 'pass' | 'fail' | 'error', seconds: number): void {
    // Check ids come from the registry (a closed set), so they are bounded labels; each id's cells
    // are bound once (no label key built per check run).
    let c = this.checkCells.get(checkId);
    if (!c) {
      c = { latency: this.checkLatency.cell(checkId) };
      this.checkCells.set(checkId, c);
    }
    // A verdict's series appears when it first happens, as every other counter's does.
    (c[verdict] ??= this.checks.cell(checkId, verdict)).inc();
    c.latency.observe(seconds);
  }

  hookDenied(hookId: string, list: string): void {
    this.denials.cell(this.target(hookId), list).inc();
  }

  feedback(hookId: string, value: number, weight: number): void {
    const hook = this.target(hookId);
    this.feedbackCount.cell(hook).inc();
    const g = this.feedbackValue.cell(hook);
    g.set(g.value + value * weight);
  }

  usage(workspace: string, provider: string, usage: Usage, costUsd: number | undefined): void {
    let byProvider = this.usageCells.get(workspace);
    if (!byProvider) {
      byProvider = new Map();
      this.usageCells.set(workspace, byProvider);
    }
    let cells = byProvider.get(provider);
    if (!cells) {
      const ws = bounded(this.seenWorkspaces, workspace === '' ? 'none' : workspace, this.maxTargets);
      cells = [this.usageTokens.cell(ws, provider, 'input'), this.usageTokens.cell(ws, provider, 'output'), this.usageCost.cell(ws, provider)];
      byProvider.set(provider, cells);
    }
    cells[0].inc(usage.prompt_tokens);
    cells[1].inc(usage.completion_tokens);
    if (costUsd !== undefined) cells[2].inc(costUsd);
  }

  limitRejected(policyId: string): void {
    this.limitRejections.cell(bounded(this.seenPolicies, policyId, POLICY_LABELS_MAX)).inc();
  }

  limitAlert(policyId: string): void {
    this.limitAlerts.cell(bounded(this.seenPolicies, policyId, POLICY_LABELS_MAX)).inc();
  }

  limitStoreError(outcome: 'admitted' | 'refused'): void {
    this.limitStoreErrors.cell(outcome).inc();
  }

  private target(name: string): string {
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

  targetFinished(t: TargetLabels, outcome: Outcome, status: number, seconds: number): void {
    const c = this.cells(t);
    c.inFlight.dec();
    const o = OUTCOME_SLOT[outcome];
    const r = o * 11 + classSlot(status);
    (c.requests[r] ??= this.targetRequests.cell(c.target, t.provider, t.endpoint, OUTCOMES[o]!, statusClass(status))).inc();
    (c.duration[o] ??= this.operationDuration.cell(c.target, t.provider, OPERATION[t.endpoint], OUTCOMES[o]!)).observe(seconds);
  }

  timeToFirstToken(t: TargetLabels, seconds: number): void {
    const c = this.cells(t);
    (c.ttft ??= this.ttft.cell(c.target, t.provider, OPERATION[t.endpoint])).observe(seconds);
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
    for (const s of CIRCUIT_STATES) this.circuitState.cell(target, s).set(s === status ? 1 : 0);
    if (transition) this.circuitTransitions.cell(target, transition.from, transition.to).inc();
  }

  cacheLookup(mode: string, result: string): void {
    this.cacheLookups.cell(mode, result).inc();
  }

  storeOperation(store: string, operation: string, seconds: number, ok: boolean): void {
    this.storeLatency.cell(store, operation).observe(seconds);
    if (!ok) this.storeErrors.cell(store, operation).inc();
  }

  request(endpoint: string, status: number, totalSeconds: number, overheadSeconds: number): void {
    let e = this.endpointCells.get(endpoint);
    if (!e) {
      e = { duration: [], overhead: this.overhead.cell(endpoint) };
      this.endpointCells.set(endpoint, e);
    }
    (e.duration[classSlot(status)] ??= this.requestDuration.cell(endpoint, statusClass(status))).observe(totalSeconds);
    e.overhead.observe(Math.max(0, overheadSeconds));
  }
}
