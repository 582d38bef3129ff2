/**
 * Renders docs/benchmarks.md's results from benchmarks/results/latest.json (what
 * `npm run bench -- --save-latest` writes): when and where the run was made, the summary table (CPU
 * per request of each contender, their ratios), the targets, and each scenario's title and per-rep
 * figures. Files written before the summary table existed carry per-scenario `rows` and `tables`
 * instead, rendered as they are. Every figure on the page comes from the file; none is typed by hand.
 *
 *   node --import tsx scripts/bench-table.ts           # check: exit 1 when the page differs
 *   node --import tsx scripts/bench-table.ts --write   # rewrite the results
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { writeOrCheck } from './markers.js';

export const BENCH_PAGE = 'docs/benchmarks.md';
export const BENCH_MARKER = 'bench';
export const RESULTS_FILE = 'benchmarks/results/latest.json';

type Cell = number | string | undefined;
interface Row {
  metric: string;
  unit?: string;
  gateway?: Cell;
  proxy?: Cell;
  direct?: Cell;
  compare?: string;
  proxyCompare?: string;
  digits?: number;
}
interface Table {
  title?: string;
  header: string[];
  rows: Cell[][];
}
interface Scenario {
  title: string;
  rows?: Row[];
  tables?: Table[];
  notes?: string[] | null;
  checks?: { target: string; value: string; met: boolean }[];
}
export interface Results {
  startedAt: string;
  commit?: string;
  quick: boolean;
  elapsedS: number;
  config: { reps: number };
  machine: { nproc: number; cpuModel: string; node: string; platform: string; wrk?: string | null; autocannon?: string; loadavgAtStart?: number[] };
  checks?: { target: string; value: string; met: boolean }[];
  /** With --against: the ref measured in the same run. */
  against?: { ref: string; commit: string };
  /** One row per scenario: CPU per request of each contender and their ratios (preformatted cells). */
  summary?: { header: string[]; rows: string[][] };
  scenarios: Record<string, Scenario>;
}

const esc = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function num(x: Cell, digits = 1): string {
  if (typeof x !== 'number') return x === undefined || x === '' ? '' : esc(String(x));
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function table(header: string[], rows: string[][]): string[] {
  return [`| ${header.map(esc).join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}

/** The Markdown between the page's bench markers, from a results file's contents. */
export function renderBenchTable(r: Results): string {
  const m = r.machine;
  const when = `${r.startedAt.slice(0, 10)} ${r.startedAt.slice(11, 16)} UTC`;
  const out: string[] = [
    `Run of ${when}, commit ${r.commit ? `\`${r.commit}\`` : 'not recorded'}; ${r.quick ? 'a quick run (`BENCH_QUICK=1`)' : 'a full run'}, ` +
      `${r.config.reps} interleaved reps, ${num(r.elapsedS, 0)} s in all.`,
    `Machine: ${m.nproc} cores, ${esc(m.cpuModel)}, ${esc(m.platform)}, Node ${m.node}` +
      `${m.wrk ? `, ${esc(m.wrk)}` : ''}${m.autocannon ? `, autocannon ${m.autocannon}` : ''}` +
      `${m.loadavgAtStart ? `; load average at start ${m.loadavgAtStart.join(' / ')}` : ''}.`,
    '',
  ];
  if (r.against) out.push(`Measured against \`${esc(r.against.ref)}\` (commit \`${r.against.commit}\`), built and run in the same run.`, '');
  if (r.summary) {
    out.push('CPU µs per request: the median of the reps ± half their range; ratios rep by rep, median (range).', '');
    out.push(...table(r.summary.header, r.summary.rows.map((row) => row.map(esc))), '');
  }
  if (r.checks?.length) {
    out.push('**Targets**', '', ...table(['target', 'measured', 'met'], r.checks.map((c) => [esc(c.target), esc(c.value), c.met ? 'yes' : '**no**'])), '');
  }
  for (const [id, s] of Object.entries(r.scenarios)) {
    out.push(`### \`${id}\``, '', esc(s.title), '');
    if (s.rows?.length) {
      const withProxy = s.rows.some((x) => x.proxy !== undefined);
      const header = withProxy
        ? ['figure', 'unit', 'gateway', 'minimal proxy', 'direct', 'gateway compared', 'proxy compared']
        : ['figure', 'unit', 'gateway', 'direct', 'gateway compared'];
      const rows = s.rows.map((x) => {
        const d = x.digits ?? 1;
        const base = [esc(x.metric), esc(x.unit ?? ''), num(x.gateway, d)];
        return withProxy
          ? [...base, num(x.proxy, d), num(x.direct, d), esc(x.compare ?? ''), esc(x.proxyCompare ?? '')]
          : [...base, num(x.direct, d), esc(x.compare ?? '')];
      });
      out.push(...table(header, rows), '');
    }
    for (const t of s.tables ?? []) {
      if (t.title) out.push(esc(t.title), '');
      out.push(...table(t.header, t.rows.map((row) => row.map((c) => num(c, 0)))), '');
    }
    for (const n of s.notes ?? []) out.push(`- ${esc(n)}`);
    if (s.notes?.length) out.push('');
  }
  return out.join('\n');
}

export function readResults(file = RESULTS_FILE): Results {
  return JSON.parse(readFileSync(file, 'utf8')) as Results;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeOrCheck(BENCH_PAGE, BENCH_MARKER, () => renderBenchTable(readResults()));
}
