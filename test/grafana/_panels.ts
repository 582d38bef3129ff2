/**
 * Every panel query of every dashboard in grafana/dashboards/, Grafana's variables filled in as
 * Grafana sends them to Prometheus, and the alerting rules of grafana/alerts/ (not a test file itself).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

const GRAFANA = join(fileURLToPath(new URL('../..', import.meta.url)), 'grafana');
export const DASHBOARDS_DIR = join(GRAFANA, 'dashboards');

/** The alerting rules of grafana/alerts/sluice-rules.yml. */
export function alertRules(): { alert: string; expr: string }[] {
  const doc = parseYaml(readFileSync(join(GRAFANA, 'alerts', 'sluice-rules.yml'), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}

interface Panel {
  id: number;
  type: string;
  title: string;
  panels?: Panel[];
  targets?: { refId?: string; expr?: string; hide?: boolean }[];
}
interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
}
interface Dashboard {
  title: string;
  panels: Panel[];
  templating?: { list: Variable[] };
}

/** One target of one panel: where it is (for failure messages) and its expression as written. */
export interface PanelQuery {
  where: string;
  expr: string;
}

export function dashboards(): { file: string; dashboard: Dashboard }[] {
  return readdirSync(DASHBOARDS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, dashboard: JSON.parse(readFileSync(join(DASHBOARDS_DIR, file), 'utf8')) as Dashboard }));
}

/** Every panel, rows included, and the children of collapsed rows. */
function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

/** Every target of every panel of every dashboard. */
export function panelQueries(): PanelQuery[] {
  return dashboards().flatMap(({ file, dashboard }) =>
    allPanels(dashboard.panels).flatMap((p) =>
      (p.targets ?? []).map((t) => ({ where: `${file} panel ${p.id} "${p.title}" ${t.refId ?? ''}`.trim(), expr: t.expr ?? '' })),
    ),
  );
}

/** The `label_values(metric, label)` variables of every dashboard. */
export function labelVariables(): { where: string; name: string; metric: string; label: string }[] {
  return dashboards().flatMap(({ file, dashboard }) =>
    (dashboard.templating?.list ?? [])
      .filter((v) => v.type === 'query')
      .map((v) => {
        const q = typeof v.query === 'string' ? v.query : v.query.query;
        const m = /^label_values\(\s*([^,]+?)\s*,\s*(\w+)\s*\)$/.exec(q);
        if (!m) throw new Error(`${file} variable ${v.name}: not a label_values(metric, label) query: ${q}`);
        return { where: `${file} variable ${v.name}`, name: v.name, metric: m[1]!, label: m[2]! };
      }),
  );
}

/**
 * A panel that ends in `or vector(0)` always has a value: its real series is the expression without
 * it (outermost parentheses around a ratio's numerator included: `(x or vector(0)) / y` becomes `x / y`).
 */
export function withoutVectorZero(expr: string): string {
  // `or` binds loosest, so `A or vector(0)` is A or'ed with zero: A alone is its real series, also
  // inside parentheses (`(A or vector(0)) / B` becomes `(A) / B`).
  return expr.replace(/\s+or\s+vector\(0\)(?=\s*(\)|$))/g, '');
}

/** Grafana's regex formatting of a multi-value selection: each value escaped, joined as an alternation. */
export function regexOf(values: string[]): string {
  const escaped = values.map((v) => v.replace(/[\\^$.*+?()[\]{}|']/g, (c) => `\\${c}`).replace(/\\/g, '\\\\'));
  return escaped.length === 1 ? escaped[0]! : `(${escaped.join('|')})`;
}

/**
 * The expression as Grafana sends it: `values` for the dashboard's own variables (already in regex
 * form), `$__rate_interval`, `$__interval` and `$__range` from the scrape interval and the time range.
 * A `$` left over names a variable this function does not know.
 */
export function fill(expr: string, values: Record<string, string>, rangeSeconds: number, rateInterval: string): string {
  let out = expr
    .replaceAll('$__rate_interval', rateInterval)
    .replaceAll('$__interval', '1s')
    .replaceAll('$__range_s', String(rangeSeconds))
    .replaceAll('$__range', `${rangeSeconds}s`);
  for (const [name, value] of Object.entries(values)) out = out.replace(new RegExp(`\\$\\{${name}\\}|\\$${name}\\b`, 'g'), value);
  if (out.includes('$')) throw new Error(`a variable is left unfilled in ${out}`);
  return out;
}
