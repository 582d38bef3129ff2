/**
 * Every dashboard on live data: a Prometheus server of the test's own (Debian's `prometheus`)
 * scrapes a gateway every second while mixed load with faults runs through it (test/grafana/_load.ts:
 * fallbacks, retries on 429s, timeouts, an open circuit, slow and cut streams, cache and semantic hits,
 * guardrail passes, failures and denials, usage-limit alerts and refusals, Redis stopped for a
 * moment); then every target of every panel of every dashboard in grafana/dashboards/ runs against
 * that Prometheus with Grafana's variables filled in, once with "All" selected and once with real
 * values, and must return data. A panel ending in `or vector(0)` is run on its real series.
 *
 * Skipped, saying why, only when no `prometheus` binary is installed (`.ci/run` installs it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../cache-http/_http.js';
import { startLiveStack, type LiveStack } from './_load.js';
import { alertRules, fill, labelVariables, panelQueries, regexOf, withoutVectorZero } from './_panels.js';
import { binary, labelValues, queryRange, startPrometheus, type RunningPrometheus, shown } from './_prometheus.js';

const JOB = 'sluice-live';
/** Grafana's `$__rate_interval` is at least four scrape intervals; scrapes here are 1 s apart. */
const RATE_INTERVAL = '5s';
/** How long the load runs: several rate windows, Redis stopped for a moment in the middle. */
const LOAD_MS = 16_000;
const REDIS_PAUSE = { at: 5_000, ms: 2_500 };

/** Series the load must have made (counted above zero by the end), whatever the panels ask. */
const FAULT_SERIES = [
  'sluice_target_requests_total{outcome="success"}',
  'sluice_target_requests_total{outcome="error", status_class="5xx"}',
  'sluice_target_requests_total{outcome="error", status_class="4xx"}',
  'sluice_target_requests_total{outcome="timeout"}',
  'sluice_circuit_state{target="failing", state="open"}',
  'sluice_circuit_transitions_total{target="failing", from="closed", to="open"}',
  'sluice_target_retries_total{target="throttled"}',
  'sluice_fallbacks_total',
  'gen_ai_server_time_to_first_token_seconds_count{target="slow"}',
  'sluice_cache_lookups_total{mode="simple", result="HIT"}',
  'sluice_cache_lookups_total{mode="semantic", result="SEMANTIC_HIT"}',
  'sluice_check_verdicts_total{verdict="pass"}',
  'sluice_check_verdicts_total{verdict="fail"}',
  'sluice_hook_denials_total',
  'sluice_store_errors_total{store="redis-cache"}',
  'sluice_usage_cost_usd_total{workspace="ws-live"}',
  'sluice_usage_limit_alerts_total',
  'sluice_usage_limit_rejections_total',
  'sluice_usage_limit_store_errors_total',
];

const PROMETHEUS = binary('prometheus');
if (!PROMETHEUS) {
  console.warn('live dashboard test skipped: no `prometheus` binary on PATH (apt-get install -y prometheus; .ci/run installs it)');
}

describe.skipIf(!PROMETHEUS)('every dashboard panel against a live Prometheus', () => {
  let dir: string;
  let stack: LiveStack | undefined;
  let prom: RunningPrometheus | undefined;
  let start = 0;
  let end = 0;

  /**
   * Runs every panel query with `values` for the dashboards' variables; names those that show
   * nothing: no finite value (no series, or only NaN), or only zeros (a flat line where the load made
   * something happen).
   */
  async function emptyPanels(values: Record<string, string>): Promise<string[]> {
    const empty: string[] = [];
    for (const { where, expr } of panelQueries()) {
      const filled = fill(withoutVectorZero(expr), values, Math.ceil(end - start), RATE_INTERVAL);
      const shows = shown(await queryRange(prom!.url, filled, start, end));
      if (shows !== 'data') empty.push(`${where} (${shows}): ${filled}`);
    }
    return empty;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-prom-'));
    stack = await startLiveStack();
    prom = await startPrometheus(PROMETHEUS!, dir, JOB, new URL(stack.gw.url).host);
    const scraped = async (): Promise<number | false> => {
      const up = await queryRange(prom!.url, `timestamp(up{job="${JOB}"} == 1)`, Date.now() / 1000 - 2, Date.now() / 1000);
      return up[0]?.values.at(-1) ? Number(up[0].values.at(-1)![1]) : false;
    };
    await until('a first scrape of the gateway', scraped, 15_000, 200);
    start = Date.now() / 1000;
    await stack.drive(LOAD_MS, 4, REDIS_PAUSE);
    // Two more scrapes after the load, so its last increments are in Prometheus.
    const after = Date.now() / 1000 + 1;
    await until('the scrapes after the load', async () => ((await scraped()) || 0) > after, 10_000, 200);
    end = Date.now() / 1000;
  }, 60_000);

  afterAll(async () => {
    await prom?.stop();
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 20_000);

  it('drove the load the panels show: successes, fallbacks, 502s, cache and semantic hits, 246s, 446s, alerts then 412s', () => {
    const t = stack!.tally;
    const seen = (scenario: string, key: string) => expect(t[scenario]?.[key] ?? 0, `${scenario} ${key} in ${JSON.stringify(t)}`).toBeGreaterThan(0);
    seen('healthy', '200');
    seen('stream', '200');
    seen('fallback', '200');
    seen('broken', '502');
    seen('slowStream', '200');
    seen('cache', '200 HIT');
    seen('cache', '200 SEMANTIC_HIT');
    seen('guardrails', '200');
    seen('guardrails', '246');
    seen('guardrails', '446');
    seen('limits', '200');
    seen('limits', '412');
  });

  it('made every series the faults should make: each verdict, hits, the open circuit, timeouts, retries, store and limit errors', async () => {
    const missing: string[] = [];
    for (const selector of FAULT_SERIES) {
      if (shown(await queryRange(prom!.url, `sum(${selector})`, end - 1, end)) !== 'data') missing.push(selector);
    }
    expect(missing, `series with no count in ${JSON.stringify(stack!.tally)}`).toEqual([]);
  });

  it('lists values for every dashboard variable', async () => {
    for (const v of labelVariables()) {
      expect(await labelValues(prom!.url, v.metric, v.label, start, end), `${v.where}: label_values(${v.metric}, ${v.label})`).not.toEqual([]);
    }
  });

  it('meets the conditions of the alert rules its faults should trip, on the series the gateway really exports', async () => {
    const quiet = ['SluiceDown', 'SluiceGatewayOverheadHigh'];
    const unmet: string[] = [];
    for (const rule of alertRules().filter((r) => !quiet.includes(r.alert))) {
      if (shown(await queryRange(prom!.url, rule.expr, end - 1, end)) === 'no data') unmet.push(`${rule.alert}: ${rule.expr}`);
    }
    expect(unmet, 'alert conditions with no series').toEqual([]);
  });

  it('has data on every panel with "All" selected', async () => {
    const all = Object.fromEntries(labelVariables().map((v) => [v.name, '.*']));
    expect(await emptyPanels({ DS_PROMETHEUS: '', ...all }), 'panels showing nothing').toEqual([]);
  }, 30_000);

  it('has data on every panel with real values selected (every value listed, one endpoint: chat)', async () => {
    const values: Record<string, string> = { DS_PROMETHEUS: '' };
    for (const v of labelVariables()) {
      const listed = await labelValues(prom!.url, v.metric, v.label, start, end);
      expect(listed.length, `${v.where}`).toBeGreaterThan(0);
      values[v.name] = regexOf(v.name === 'endpoint' ? ['chat'] : listed);
    }
    expect(values.target).toMatch(/^\(.*\|.*\)$/);
    expect(await emptyPanels(values), `panels showing nothing for ${JSON.stringify(values)}`).toEqual([]);
  }, 30_000);
});

describe('panel queries as Grafana sends them', () => {
  it('runs a panel ending in `or vector(0)` on its real series, also inside a ratio', () => {
    expect(withoutVectorZero('count(x == 1) or vector(0)')).toBe('count(x == 1)');
    expect(withoutVectorZero('(sum(rate(a[1m])) or vector(0)) / sum(rate(b[1m]))')).toBe('(sum(rate(a[1m]))) / sum(rate(b[1m]))');
    expect(withoutVectorZero('sum(a) or 0 * sum(b)')).toBe('sum(a) or 0 * sum(b)');
  });

  it('fills the variables, escaping real values as a regex alternation, and refuses one it does not know', () => {
    expect(regexOf(['a', 'config.targets[1]'])).toBe('(a|config\\\\.targets\\\\[1\\\\])');
    expect(fill('rate(x{job=~"$job", t=~"${target}"}[$__rate_interval]) * $__range_s', { job: 'j', target: '.*' }, 30, '5s')).toBe(
      'rate(x{job=~"j", t=~".*"}[5s]) * 30',
    );
    expect(() => fill('x{a=~"$model"}', { job: 'j' }, 30, '5s')).toThrow(/\$model/);
  });
});
