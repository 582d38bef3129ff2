/**
 * The alerting rules in grafana/alerts/: `promtool check rules` accepts them, `promtool test rules`
 * passes their unit tests (each alert firing and not firing on synthetic series), they name only
 * metrics the gateway exports, every alert has a test, and grafana/prometheus.yml loads them.
 *
 * The promtool runs are skipped, saying why, only when promtool is not installed (`.ci/run`
 * installs Debian's prometheus package, which has it).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { binary } from './_prometheus.js';

const GRAFANA = fileURLToPath(new URL('../../grafana', import.meta.url));
const RULES = join(GRAFANA, 'alerts', 'sluice-rules.yml');
const RULE_TESTS = join(GRAFANA, 'alerts', 'sluice-rules.test.yml');
const METRICS_SOURCE = readdirSync(fileURLToPath(new URL('../../src/metrics', import.meta.url)))
  .map((f) => readFileSync(fileURLToPath(new URL(`../../src/metrics/${f}`, import.meta.url)), 'utf8'))
  .join('\n');

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules = (parseYaml(readFileSync(RULES, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const ruleTests = parseYaml(readFileSync(RULE_TESTS, 'utf8')) as {
  tests: { alert_rule_test: { alertname: string; exp_alerts?: unknown[] }[] }[];
};

const PROMTOOL = binary('promtool');
const SKIP = PROMTOOL ? '' : ' [SKIPPED: promtool not on PATH; install it (Debian package "prometheus") to run this check]';
if (!PROMTOOL) console.warn('alert rule checks skipped: no `promtool` on PATH (apt-get install -y prometheus; .ci/run installs it)');

const promtool = (...args: string[]) => spawnSync(PROMTOOL!, args, { encoding: 'utf8', cwd: GRAFANA, timeout: 30_000 });

describe('grafana/alerts/sluice-rules.yml', () => {
  it('alerts on a target error ratio, an open circuit, overhead p99, store errors and usage near its limit', () => {
    const byMetric = (metric: string) => rules.filter((r) => r.expr.includes(metric)).map((r) => r.alert);
    expect(byMetric('sluice_target_requests_total')).toContain('SluiceTargetErrorRatioHigh');
    expect(byMetric('sluice_circuit_state')).toContain('SluiceCircuitOpen');
    expect(byMetric('sluice_gateway_overhead_seconds_bucket')).toContain('SluiceGatewayOverheadHigh');
    expect(byMetric('sluice_store_errors_total')).toContain('SluiceStoreErrors');
    expect(byMetric('sluice_usage_limit_alerts_total')).toContain('SluiceUsageNearLimit');
  });

  it('names only metrics the gateway exports, and gives every alert a severity, a summary and a description', () => {
    for (const r of rules) {
      const names = (r.expr.replace(/"[^"]*"/g, '').replace(/\b(by|without|on|ignoring)\s*\([^()]*\)/g, '').match(/\b(?:sluice|gen_ai)_[a-z0-9_]+/g) ?? []).map((n) =>
        n.replace(/_(bucket|sum|count)$/, ''),
      );
      for (const n of names) expect(METRICS_SOURCE, `${r.alert}: ${n}`).toMatch(new RegExp(`['"\`]${n}['"\`]`));
      expect(['critical', 'warning', 'info'], `${r.alert} severity`).toContain(r.labels?.severity);
      expect(r.annotations?.summary && r.annotations.description, `${r.alert} annotations`).toBeTruthy();
    }
  });

  it('has unit tests in which every alert fires and, at another time or on other series, does not', () => {
    const cases = ruleTests.tests.flatMap((t) => t.alert_rule_test);
    for (const r of rules) {
      const mine = cases.filter((c) => c.alertname === r.alert);
      expect(mine.some((c) => (c.exp_alerts ?? []).length > 0), `${r.alert} firing`).toBe(true);
      expect(mine.some((c) => (c.exp_alerts ?? []).length === 0), `${r.alert} quiet`).toBe(true);
    }
  });

  it('is loaded by grafana/prometheus.yml', () => {
    const config = parseYaml(readFileSync(join(GRAFANA, 'prometheus.yml'), 'utf8')) as { rule_files?: string[] };
    expect(config.rule_files).toEqual(['alerts/sluice-rules.yml']);
  });

  it.skipIf(!PROMTOOL)(`passes promtool check rules${SKIP}`, () => {
    const r = promtool('check', 'rules', RULES);
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it.skipIf(!PROMTOOL)(`passes promtool test rules${SKIP}`, () => {
    const r = promtool('test', 'rules', RULE_TESTS);
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('SUCCESS');
  });
});
