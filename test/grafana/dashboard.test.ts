/**
 * The Grafana dashboard, its provisioning files and the Prometheus scrape config under grafana/: every
 * panel is well formed, every PromQL expression is balanced and names only metrics the gateway exports
 * (or prom-client defaults), the provisioning points at the
 * dashboards folder, and, when promtool is installed, Prometheus itself accepts the scrape config and
 * parses every expression.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GRAFANA = join(ROOT, 'grafana');
const DASHBOARD_FILE = join(GRAFANA, 'dashboards', 'sluice.json');
/** The metric definitions: src/metrics/ (prometheus.ts and target-metrics.ts). */
const METRICS_SOURCE = readdirSync(join(ROOT, 'src', 'metrics'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => readFileSync(join(ROOT, 'src', 'metrics', f), 'utf8'))
  .join('\n');

/** prom-client default metrics the Process row uses. */
const DEFAULT_METRICS = ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes'];
const HISTOGRAM_SUFFIX = /_(bucket|sum|count)$/;
const METRIC_NAME = /\b(sluice|gen_ai|process|nodejs)_[a-z0-9_]+/g;

interface Target {
  refId?: string;
  expr?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  gridPos?: { h: number; w: number; x: number; y: number };
  targets?: Target[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
  definition?: string;
  multi?: boolean;
  includeAll?: boolean;
  datasource?: { type?: string; uid?: string };
}
interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
}

const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;

/** Every panel, rows included, and the panels nested in collapsed rows. */
function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}
const panels = allPanels(dashboard.panels);
const queryPanels = panels.filter((p) => p.type !== 'row');
const exprs: { where: string; expr: string }[] = queryPanels.flatMap((p) =>
  (p.targets ?? []).map((t) => ({ where: `panel ${p.id} "${p.title}" ${t.refId ?? ''}`, expr: t.expr ?? '' })),
);
const varQuery = (v: Variable): string => (typeof v.query === 'string' ? v.query : v.query.query);
const variable = (name: string): Variable | undefined => dashboard.templating.list.find((v) => v.name === name);

/** The expression without string literals: label values, regexes. */
function withoutStrings(expr: string): string {
  return expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
}

/**
 * Metric names an expression references: identifiers outside label matchers ({...}) and grouping
 * clauses (by/without/on/ignoring/group_left/group_right (...)), so label names such as
 * gen_ai_token_type are not taken for metrics.
 */
function metricNames(expr: string): string[] {
  const stripped = withoutStrings(expr)
    .replace(/\{[^{}]*\}/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)/g, '');
  return [...new Set(stripped.match(METRIC_NAME) ?? [])];
}

/** Null when (), [] and {} balance outside string literals, else what is wrong. */
function unbalanced(expr: string): string | null {
  const closing: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  const stack: string[] = [];
  for (const ch of withoutStrings(expr)) {
    if (ch === '(' || ch === '[' || ch === '{') stack.push(ch);
    else if (ch in closing) {
      if (stack.pop() !== closing[ch]) return `unexpected ${ch}`;
    }
  }
  return stack.length === 0 ? null : `unclosed ${stack.join('')}`;
}

/** Whether src/metrics/ defines the metric `name` (as a quoted string, e.g. name: '...'). */
function definedInSource(name: string): boolean {
  return new RegExp(`['"\`]${name}['"\`]`).test(METRICS_SOURCE);
}

function knownMetric(name: string): boolean {
  const base = name.replace(HISTOGRAM_SUFFIX, '');
  for (const n of new Set([name, base])) {
    if (definedInSource(n) || DEFAULT_METRICS.includes(n)) return true;
  }
  return false;
}

const promtoolFound = ((): boolean => {
  const r = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
  return !r.error && r.status === 0;
})();
const PROMTOOL_SKIP = promtoolFound ? '' : ' [SKIPPED: promtool not on PATH; install it (Debian package "prometheus") to run this check]';

describe('grafana/dashboards/sluice.json', () => {
  it('is a schemaVersion 39 dashboard with the expected uid and title', () => {
    expect(dashboard.schemaVersion).toBe(39);
    expect(dashboard.uid).toBe('sluice-overview');
    expect(dashboard.title).toBe('Sluice gateway');
  });

  it('has a Prometheus datasource variable and multi-value target and endpoint variables', () => {
    const ds = variable('DS_PROMETHEUS');
    expect(ds?.type).toBe('datasource');
    expect(ds?.query).toBe('prometheus');

    const target = variable('target');
    expect(target?.type).toBe('query');
    expect(varQuery(target!)).toBe('label_values(sluice_target_requests_total, target)');
    expect(target?.multi).toBe(true);
    expect(target?.includeAll).toBe(true);

    const endpoint = variable('endpoint');
    expect(endpoint?.type).toBe('query');
    expect(varQuery(endpoint!)).toMatch(/^label_values\(\w+, endpoint\)$/);

    for (const v of dashboard.templating.list.filter((x) => x.type === 'query')) {
      expect(v.datasource, `variable ${v.name}`).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
    }
  });

  it('has the Overview, Per target, Circuit breakers, Cache & store, Guardrails & usage limits and Process rows', () => {
    expect(panels.filter((p) => p.type === 'row').map((p) => p.title)).toEqual([
      'Overview',
      'Per target',
      'Circuit breakers',
      'Cache & store',
      'Guardrails & usage limits',
      'Process',
    ]);
  });

  it('gives every panel a unique id and a title', () => {
    const ids = panels.map((p) => p.id);
    for (const p of panels) {
      expect(Number.isInteger(p.id), `panel ${JSON.stringify(p.title)} id`).toBe(true);
      expect(typeof p.title === 'string' && p.title.trim().length > 0, `panel ${p.id} title`).toBe(true);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives every panel at least one target with a non-empty expr, on the datasource variable', () => {
    expect(queryPanels.length).toBeGreaterThan(20);
    for (const p of queryPanels) {
      expect(p.targets?.length ?? 0, `panel ${p.id} "${p.title}" targets`).toBeGreaterThan(0);
      expect(p.datasource, `panel ${p.id} datasource`).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
      const refIds = p.targets!.map((t) => t.refId);
      expect(new Set(refIds).size, `panel ${p.id} refIds`).toBe(refIds.length);
      for (const t of p.targets!) {
        expect(typeof t.expr === 'string' && t.expr.trim().length > 0, `panel ${p.id} "${p.title}" ${t.refId} expr`).toBe(true);
        expect(t.datasource, `panel ${p.id} ${t.refId} datasource`).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
      }
    }
  });

  it('keeps every panel inside the 24-column grid', () => {
    for (const p of panels) {
      const g = p.gridPos!;
      expect(g, `panel ${p.id} gridPos`).toBeDefined();
      expect(g.x >= 0 && g.w > 0 && g.x + g.w <= 24 && g.h > 0 && g.y >= 0, `panel ${p.id} gridPos ${JSON.stringify(g)}`).toBe(true);
    }
  });

  it('balances parentheses, brackets and braces in every expr', () => {
    for (const { where, expr } of exprs) expect(unbalanced(expr), `${where}: ${expr}`).toBeNull();
  });

  it('uses $__rate_interval for every range selector', () => {
    for (const { where, expr } of exprs) {
      for (const m of withoutStrings(expr).matchAll(/\[([^\]]*)\]/g)) expect(m[1], `${where}: ${expr}`).toBe('$__rate_interval');
    }
  });

  it('references only metrics that src/metrics/ defines, the later cache/store metrics or prom-client defaults', () => {
    // The check is not vacuous: names are found, and label names are not taken for metrics.
    expect(definedInSource('sluice_target_requests_total')).toBe(true);
    expect(metricNames('sum by (gen_ai_token_type) (rate(gen_ai_client_token_usage_total{gen_ai_token_type="input"}[5m]))')).toEqual([
      'gen_ai_client_token_usage_total',
    ]);
    expect(knownMetric('sluice_no_such_metric_total')).toBe(false);

    const queries = [...exprs, ...dashboard.templating.list.filter((v) => v.type === 'query').map((v) => ({ where: `variable ${v.name}`, expr: varQuery(v) }))];
    const referenced = new Set<string>();
    for (const { where, expr } of queries) {
      const names = metricNames(expr);
      if (!where.startsWith('variable')) expect(names.length, `${where}: no metric in ${expr}`).toBeGreaterThan(0);
      for (const name of names) {
        referenced.add(name.replace(HISTOGRAM_SUFFIX, ''));
        expect(knownMetric(name), `${where}: unknown metric ${name} in ${expr}`).toBe(true);
      }
    }
    // Every metric named in the brief has a panel.
    for (const name of [
      'sluice_target_requests_total',
      'gen_ai_client_operation_duration_seconds',
      'gen_ai_server_time_to_first_token_seconds',
      'gen_ai_client_token_usage_total',
      'sluice_target_retries_total',
      'sluice_fallbacks_total',
      'sluice_circuit_state',
      'sluice_circuit_transitions_total',
      'sluice_target_in_flight_requests',
      'sluice_request_duration_seconds',
      'sluice_gateway_overhead_seconds',
      'sluice_cache_lookups_total',
      'sluice_store_errors_total',
      'sluice_store_operation_duration_seconds',
      'sluice_check_verdicts_total',
      'sluice_check_duration_seconds',
      'sluice_hook_denials_total',
      'sluice_usage_tokens_total',
      'sluice_usage_cost_usd_total',
      'sluice_usage_limit_rejections_total',
      'sluice_usage_limit_alerts_total',
      'sluice_usage_limit_store_errors_total',
      ...DEFAULT_METRICS,
    ]) {
      expect(referenced.has(name), `no panel queries ${name}`).toBe(true);
    }
  });

  it.skipIf(!promtoolFound)(`parses every expr with promtool check rules${PROMTOOL_SKIP}`, () => {
    // Grafana's variables substituted as Grafana would with "All" selected.
    const promql = (expr: string): string =>
      expr
        .replace(/\$__rate_interval/g, '1m')
        .replace(/\$(job|target|endpoint)\b/g, '.*');
    const groups = [
      {
        name: 'sluice-dashboard',
        rules: exprs.map(({ expr }, i) => ({ record: `sluice_dashboard:expr_${i}`, expr: promql(expr) })),
      },
    ];
    const dir = mkdtempSync(join(tmpdir(), 'sluice-grafana-'));
    try {
      const file = join(dir, 'rules.yml');
      writeFileSync(file, JSON.stringify({ groups }, null, 2)); // JSON is YAML
      const r = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('grafana/provisioning', () => {
  it('provisions a Prometheus datasource', () => {
    const doc = parseYaml(readFileSync(join(GRAFANA, 'provisioning', 'datasources', 'prometheus.yml'), 'utf8')) as {
      apiVersion: number;
      datasources: { type: string; url: string }[];
    };
    expect(doc.apiVersion).toBe(1);
    expect(doc.datasources).toHaveLength(1);
    expect(doc.datasources[0]!.type).toBe('prometheus');
    expect(doc.datasources[0]!.url).toBe('http://127.0.0.1:9090');
  });

  it('points the dashboard provider at grafana/dashboards, which exists and holds sluice.json', () => {
    const doc = parseYaml(readFileSync(join(GRAFANA, 'provisioning', 'dashboards', 'sluice.yml'), 'utf8')) as {
      apiVersion: number;
      providers: { type: string; options: { path: string } }[];
    };
    expect(doc.apiVersion).toBe(1);
    expect(doc.providers).toHaveLength(1);
    const provider = doc.providers[0]!;
    expect(provider.type).toBe('file');
    // The README starts Grafana with SLUICE_GRAFANA_DIR set to the repo's grafana/ folder.
    const path = resolve(provider.options.path.replace(/\$\{SLUICE_GRAFANA_DIR\}|\$SLUICE_GRAFANA_DIR\b/g, GRAFANA));
    expect(path).toBe(join(GRAFANA, 'dashboards'));
    expect(existsSync(path) && statSync(path).isDirectory()).toBe(true);
    expect(readdirSync(path)).toContain('sluice.json');
    expect(readFileSync(join(GRAFANA, 'README.md'), 'utf8')).toContain('SLUICE_GRAFANA_DIR=');
  });
});

describe('grafana/prometheus.yml', () => {
  const file = join(GRAFANA, 'prometheus.yml');

  it('scrapes the gateway at 127.0.0.1:8787/metrics every 5s as job "sluice"', () => {
    const doc = parseYaml(readFileSync(file, 'utf8')) as {
      scrape_configs: { job_name: string; metrics_path: string; scrape_interval: string; static_configs: { targets: string[] }[] }[];
    };
    const job = doc.scrape_configs.find((c) => c.job_name === 'sluice');
    expect(job).toBeDefined();
    expect(job!.metrics_path).toBe('/metrics');
    expect(job!.scrape_interval).toBe('5s');
    expect(job!.static_configs.flatMap((s) => s.targets)).toEqual(['127.0.0.1:8787']);
  });

  it.skipIf(!promtoolFound)(`passes promtool check config${PROMTOOL_SKIP}`, () => {
    const r = spawnSync('promtool', ['check', 'config', file], { encoding: 'utf8' });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  });
});
