/** Scenario `semantic`: see benchmarks/README.md. */
import path from 'node:path';
import type { SemanticLookupFigures } from '../semantic-lookup.js';
import { BENCH_DIR, ManagedProcess, REPO_ROOT, fmt, withCpuAndCores } from '../lib.js';
import { CFG } from '../config.js';
import { ms3, type Scenario } from '../scenario.js';

export const semantic: Scenario = {
  id: 'semantic',
  title: `Semantic cache lookup: MemoryVectorIndex search at ${CFG.semantic.sizes.map((n) => n.toLocaleString('en-US')).join(' / ')} entries (${CFG.semantic.dims} dims, ${CFG.semantic.searches} searches each; measureSemanticLookup() in a child pinned to core ${CFG.cpu.load})`,
  async run(ctx) {
    const S = ctx.cfg.semantic;
    await ctx.quietGate('semantic');
    const m = await withCpuAndCores({}, async () => {
      const p = new ManagedProcess({
        name: 'semantic-lookup',
        cpu: ctx.cfg.cpu.load,
        command: process.execPath,
        args: ['--import', 'tsx', path.relative(REPO_ROOT, path.join(BENCH_DIR, 'semantic-lookup.ts'))],
        env: { SEMANTIC_JSON: '1', SEMANTIC_SIZES: S.sizes.join(','), SEMANTIC_SEARCHES: String(S.searches), SEMANTIC_DIMS: String(S.dims) },
        discardStdout: false,
      });
      ctx.commands.semantic = p.commandLine;
      let out = '';
      p.child.stdout!.setEncoding('utf8');
      p.child.stdout!.on('data', (x: string) => (out += x));
      await p.exited;
      const j = /^SEMANTIC_JSON (.*)$/m.exec(out);
      if (!j) throw new Error(`semantic-lookup printed no SEMANTIC_JSON line:\n${out}\n${p.describeExit()}`);
      return JSON.parse(j[1]!) as SemanticLookupFigures[];
    });
    ctx.recordNoise('semantic', m);
    const figs = m.result;
    const at100k = figs.find((f) => f.entries === 100_000) ?? figs[figs.length - 1]!;
    return {
      rows: [],
      tables: [
        {
          header: ['entries', 'dims', 'searches', 'p50 ms', 'p99 ms', 'mean ms', 'recall', 'insert µs/entry'],
          rows: figs.map((f) => [f.entries.toLocaleString('en-US'), f.dims, f.searches, ms3(f.p50Ms), ms3(f.p99Ms), ms3(f.meanMs), fmt(f.recall, 3), fmt(f.insertUsPerEntry, 1)]),
        },
      ],
      checks: [{ target: `Semantic lookup p99 < 2 ms at ${at100k.entries.toLocaleString('en-US')} entries`, value: `${ms3(at100k.p99Ms)} ms`, met: at100k.p99Ms < 2 }],
      notes: ['One partition, threshold 0.95; half the searches are near-duplicates of a stored vector (cosine 0.95–1, should hit), half unrelated (miss). recall = share of near-duplicates found.'],
      data: { figures: figs },
    };
  },
};
