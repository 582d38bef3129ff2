/**
 * The layers of src/ point one way, so that a lower layer can be read, tested and reused without
 * the ones above it:
 *   composition root (main, gateway, cluster, compose) → http → (pipeline, ingress) → operators
 *     → (plan, cache, checks, limits, providers, upstream, management) → (config, pricing, state, metrics, errors, util, security)
 * A file may import its own layer or any layer below it, never one above; and no file takes part in
 * an import cycle (type-only imports included: a cycle of types is still a knot in the design).
 * Reads the sources as text, so it needs no build and names the files at fault.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../../src');

/** Layer rank per top-level entry of src/ (smaller is higher). */
const RANK: Record<string, number> = {
  'main.ts': 0,
  'gateway.ts': 0,
  'cluster.ts': 0,
  'rotate-master-key.ts': 0,
  'experiment.ts': 0,
  compose: 0,
  demo: 0,
  http: 1,
  management: 1,
  pipeline: 2,
  ingress: 2,
  operators: 3,
  limits: 4,
  plan: 4,
  cache: 4,
  checks: 4,
  providers: 4,
  upstream: 4,
  config: 5,
  pricing: 5,
  state: 5,
  metrics: 5,
  errors: 5,
  util: 5,
  security: 5,
};

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = (m[1] ?? m[2])!;
    out.push(relative(SRC, resolve(dirname(file), spec.replace(/\.js$/, '.ts'))));
  }
  return out;
}

const files = walk(SRC).map((f) => relative(SRC, f));
const graph = new Map(files.map((f) => [f, importsOf(join(SRC, f))]));
const layerOf = (f: string): string => f.split('/')[0]!;

describe('src/ layers', () => {
  it('knows the layer of every top-level entry of src/', () => {
    const unknown = [...new Set(files.map(layerOf))].filter((l) => RANK[l] === undefined);
    expect(unknown, 'add new top-level folders to RANK (and to the layout in docs/architecture.md)').toEqual([]);
  });

  it('every relative import resolves to a file in src/', () => {
    const missing = [...graph].flatMap(([f, deps]) => deps.filter((d) => !graph.has(d)).map((d) => `${f} → ${d}`));
    expect(missing).toEqual([]);
  });

  it('no file imports a layer above its own', () => {
    const upward = [...graph].flatMap(([f, deps]) =>
      deps.filter((d) => (RANK[layerOf(d)] ?? 99) < (RANK[layerOf(f)] ?? 99)).map((d) => `${f} → ${d}`),
    );
    expect(upward).toEqual([]);
  });

  it('no two top-level folders import each other, directly or in a ring', () => {
    const folders = new Map<string, Set<string>>();
    for (const [f, deps] of graph) {
      const from = layerOf(f);
      for (const d of deps) if (layerOf(d) !== from) (folders.get(from) ?? folders.set(from, new Set()).get(from)!).add(layerOf(d));
    }
    const ring = (start: string): string[] | undefined => {
      const seen = new Set<string>();
      const walk = (at: string, path: string[]): string[] | undefined => {
        for (const next of folders.get(at) ?? []) {
          if (next === start) return [...path, next];
          if (seen.has(next)) continue;
          seen.add(next);
          const found = walk(next, [...path, next]);
          if (found) return found;
        }
        return undefined;
      };
      return walk(start, [start]);
    };
    const rings = [...folders.keys()].map(ring).filter((r): r is string[] => r !== undefined).map((r) => r.join(' → '));
    expect(rings).toEqual([]);
  });

  it('no import cycles between files', () => {
    // Tarjan's strongly connected components; any component of more than one file is a cycle.
    let index = 0;
    const idx = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const cycles: string[][] = [];
    const visit = (v: string): void => {
      idx.set(v, index);
      low.set(v, index++);
      stack.push(v);
      onStack.add(v);
      for (const w of graph.get(v) ?? []) {
        if (!graph.has(w)) continue;
        if (!idx.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
      }
      if (low.get(v) === idx.get(v)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== v);
        if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(comp.sort());
      }
    };
    for (const f of graph.keys()) if (!idx.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });
});
