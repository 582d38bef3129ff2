/**
 * The names the docs give are names the code has: every metric the pages mention is one
 * src/metrics/ defines, every `x-gateway-*` header one that src/ reads or writes, every
 * `--flag` one that `sluice serve` (or `sluice plan`, the benchmark or the experiment runner) takes. A renamed metric, header or option
 * otherwise stays in the docs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { USAGE as BENCH_USAGE } from '../../benchmarks/run.js';
import { USAGE as EXPERIMENT_USAGE } from '../../benchmarks/experiment.js';
import { OPTION_TABLE } from '../../src/config/options.js';
import { ROOT, docPages, readPage } from './markdown.js';

function sourceText(dir: string): string {
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .map((e) => (e.isDirectory() ? sourceText(join(dir, e.name)) : e.name.endsWith('.ts') ? readFileSync(join(ROOT, dir, e.name), 'utf8') : ''))
    .join('\n');
}

const SRC = sourceText('src');
const METRICS = sourceText(join('src', 'metrics'));
// Link targets are left out: an anchor such as `#master-key-sluice_master_key` is not a name.
const PAGES = docPages().map((p) => [p, readPage(p).replace(/\]\([^)]*\)/g, '](…)')] as const);
const named = (re: RegExp): Map<string, string> => {
  const out = new Map<string, string>();
  for (const [page, text] of PAGES) for (const m of text.matchAll(re)) if (!out.has(m[0])) out.set(m[0], page);
  return out;
};

describe('names in the docs', () => {
  it('metrics are ones the gateway defines', () => {
    // `sluice_usage_limit_*` is a family named by its prefix.
    const metrics = named(/\b(?:sluice|gen_ai)_[a-z0-9_]*[a-z0-9]\b/g);
    expect(metrics.size).toBeGreaterThan(10);
    const unknown = [...metrics].filter(([m]) => !new RegExp(`['"\`]${m}[a-z_]*['"\`]`).test(METRICS)).map(([m, p]) => `${m} (${p})`);
    expect(unknown).toEqual([]);
  });

  it('x-gateway-* headers are ones the gateway reads or writes', () => {
    const headers = named(/\bx-gateway-[a-z0-9-]*[a-z0-9]\b/g);
    expect(headers.size).toBeGreaterThan(10);
    // `-deployment-id`-style shorthands follow a full name in the same sentence; families end in `-`.
    const unknown = [...headers].filter(([h]) => !SRC.includes(h)).map(([h, p]) => `${h} (${p})`);
    expect(unknown).toEqual([]);
  });

  it('--flags of sluice serve are options it takes', () => {
    // The benchmark's and the experiment runner's flags are the ones their usages list.
    const bench = [...`${BENCH_USAGE}${EXPERIMENT_USAGE}`.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]!);
    const known = new Set([...OPTION_TABLE.map((o) => o.flag), ...bench, 'help', 'trusted-hosts', 'bootstrap']);
    // Other tools' flags the pages name: node's, V8's, npm's, the docs scripts', `duplicates`.
    for (const f of ['import', 'write', 'heap-growing-percent', 'change', 'ignore-scripts']) known.add(f);
    known.add('version'); // sluice --version
    // Prometheus's (--config.file, --storage.tsdb.path, --web.listen-address) and Grafana's (--homepath).
    for (const f of ['config', 'storage', 'web', 'homepath']) known.add(f);
    const flags = named(/(?<![\w-])--([a-z][a-z0-9-]*[a-z0-9])\b/g);
    const unknown = [...flags].filter(([f]) => !known.has(f.slice(2))).map(([f, p]) => `${f} (${p})`);
    expect(unknown).toEqual([]);
  });
});
