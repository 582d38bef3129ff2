/**
 * Micro-benchmark: semantic-cache lookup in MemoryVectorIndex (LSH + exact cosine verification).
 *
 *   node --import tsx benchmarks/semantic-lookup.ts            # 1k / 10k / 100k entries, 256 dims
 *   SEMANTIC_DIMS=768 node --import tsx benchmarks/semantic-lookup.ts
 *   SEMANTIC_SIZES=1000,10000 SEMANTIC_SEARCHES=500 SEMANTIC_JSON=1 ...   # subset; one JSON line
 *
 * Per size: fill one partition with random vectors, warm up, then time searches one by one: half are
 * near-duplicates of a stored vector (cosine uniform in [0.95, 1), threshold 0.95: a hit), half are
 * unrelated (a miss). Reports p50/p99 per search, the recall on the near-duplicates and the insert
 * cost. Seeded, so every run searches the same data.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { MemoryVectorIndex } from '../src/state/memory/vector-index.js';
import { gaussian, seededRandom } from '../src/util/prng.js';
import { l2normalize as normalize } from '../src/util/vector.js';

export interface SemanticLookupFigures {
  entries: number;
  dims: number;
  searches: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  /** Share of near-duplicate queries (cosine ≥ 0.95) that found their source. */
  recall: number;
  insertUsPerEntry: number;
}

export interface SemanticLookupOptions {
  sizes?: number[];
  dims?: number;
  searches?: number;
  threshold?: number;
  seed?: number;
}

function pct(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function measureSemanticLookup(opts: SemanticLookupOptions = {}): SemanticLookupFigures[] {
  const sizes = opts.sizes ?? [1_000, 10_000, 100_000];
  const dims = opts.dims ?? 256;
  const searches = opts.searches ?? 2_000;
  const threshold = opts.threshold ?? 0.95;
  const out: SemanticLookupFigures[] = [];
  for (const size of sizes) {
    const g = gaussian(seededRandom((opts.seed ?? 1) + size));
    const uniform = seededRandom((opts.seed ?? 1) ^ size);
    const random = (): Float32Array => {
      const v = new Float32Array(dims);
      for (let i = 0; i < dims; i++) v[i] = g();
      return v;
    };
    const near = (v: Float32Array, cos: number): Float32Array => {
      const u = normalize(v)!;
      const r = random();
      let d = 0;
      for (let i = 0; i < dims; i++) d += r[i]! * u[i]!;
      for (let i = 0; i < dims; i++) r[i] = r[i]! - d * u[i]!;
      const w = normalize(r)!;
      const s = Math.sqrt(1 - cos * cos);
      const q = new Float32Array(dims);
      for (let i = 0; i < dims; i++) q[i] = cos * u[i]! + s * w[i]!;
      return q;
    };

    const index = new MemoryVectorIndex({ maxEntries: Math.max(size, 100_000) });
    const stored: Float32Array[] = new Array(size);
    for (let i = 0; i < size; i++) stored[i] = random();
    const t0 = performance.now();
    for (let i = 0; i < size; i++) void index.add('bench', `v${i}`, stored[i]!, 3600);
    const insertMs = performance.now() - t0;

    // queries prepared up front, so only the search is timed
    const queries: { q: Float32Array; expect?: string }[] = [];
    for (let k = 0; k < searches + 200; k++) {
      if (k % 2 === 0) {
        const i = Math.floor(uniform() * size);
        queries.push({ q: near(stored[i]!, 0.95 + 0.0499 * uniform()), expect: `v${i}` });
      } else {
        queries.push({ q: random() });
      }
    }
    for (let k = 0; k < 200; k++) index.searchSync('bench', queries[k]!.q, threshold); // warm-up
    const times: number[] = [];
    let nearTotal = 0;
    let nearFound = 0;
    for (let k = 200; k < queries.length; k++) {
      const { q, expect } = queries[k]!;
      const s = performance.now();
      const m = index.searchSync('bench', q, threshold);
      times.push(performance.now() - s);
      if (expect) {
        nearTotal++;
        if (m?.id === expect) nearFound++;
      }
    }
    const sorted = [...times].sort((a, b) => a - b);
    out.push({
      entries: size,
      dims,
      searches,
      p50Ms: pct(sorted, 50),
      p99Ms: pct(sorted, 99),
      meanMs: times.reduce((a, b) => a + b, 0) / times.length,
      recall: nearFound / nearTotal,
      insertUsPerEntry: (insertMs * 1000) / size,
    });
  }
  return out;
}

export function formatTable(rows: readonly SemanticLookupFigures[]): string {
  const head = ['entries', 'dims', 'searches', 'p50 ms', 'p99 ms', 'mean ms', 'recall', 'insert µs'];
  const body = rows.map((r) => [
    r.entries.toLocaleString('en-US'),
    String(r.dims),
    String(r.searches),
    r.p50Ms.toFixed(3),
    r.p99Ms.toFixed(3),
    r.meanMs.toFixed(3),
    r.recall.toFixed(3),
    r.insertUsPerEntry.toFixed(1),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => '| ' + cells.map((c, i) => c.padStart(widths[i]!)).join(' | ') + ' |';
  return [line(head), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...body.map(line)].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const dims = Number(process.env.SEMANTIC_DIMS ?? 256);
  const sizes = process.env.SEMANTIC_SIZES?.split(',').map(Number).filter((n) => n > 0);
  const searches = process.env.SEMANTIC_SEARCHES ? Number(process.env.SEMANTIC_SEARCHES) : undefined;
  const rows = measureSemanticLookup({ dims, ...(sizes?.length ? { sizes } : {}), ...(searches ? { searches } : {}) });
  if (process.env.SEMANTIC_JSON === '1') {
    // for benchmarks/run.ts (scenario `semantic`): one machine-readable line
    console.log(`SEMANTIC_JSON ${JSON.stringify(rows)}`);
  } else {
    console.log('MemoryVectorIndex search (one partition, threshold 0.95; half near-duplicate hits, half misses)');
    console.log(formatTable(rows));
  }
}
