import { collectDefaultMetrics } from 'prom-client';
import { CounterFamily, GaugeFamily, HistogramFamily, type CounterCell, type HistogramCell } from './series.js';
import type { Usage } from '../config/wire.js';
import type { Telemetry } from './telemetry.js';
import { bounded, TargetMetrics } from './target-metrics.js';

/** Distinct policy ids reported before the rest become `other` (policies are created through an API). */
const POLICY_LABELS_MAX = 1000;

/**
 * Every metric, defined once: those of targets and requests (TargetMetrics, target-metrics.ts), and
 * here those of the cache, the state stores, checks and hooks, usage and usage limits. Built per app
 * on its own registry (never the global one). Hook ids, as target names, are capped label values.
 */
export class PrometheusTelemetry extends TargetMetrics implements Telemetry {
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

  constructor(maxTargets = 500, defaultMetrics = true) {
    super(maxTargets);
    // Both outcomes at 0 from the start: these errors come in short bursts (a Redis outage), and a
    // series that first appears at its burst's total shows no increase to rate().
    for (const outcome of ['admitted', 'refused']) this.limitStoreErrors.cell(outcome);
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

  cacheLookup(mode: string, result: string): void {
    this.cacheLookups.cell(mode, result).inc();
  }

  storeOperation(store: string, operation: string, seconds: number, ok: boolean): void {
    this.storeLatency.cell(store, operation).observe(seconds);
    if (!ok) this.storeErrors.cell(store, operation).inc();
  }
}
