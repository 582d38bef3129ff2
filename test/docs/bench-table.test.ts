/**
 * docs/benchmarks.md shows the figures of benchmarks/results/latest.json and no others: the results
 * section is what scripts/bench-table.ts renders from the file, and the rest of the page carries no
 * measured figure typed by hand.
 */
import { describe, expect, it } from 'vitest';
import { between } from '../../scripts/markers.js';
import { BENCH_MARKER, BENCH_PAGE, readResults, renderBenchTable, type Results } from '../../scripts/bench-table.js';
import { ROOT, readPage } from './markdown.js';

describe('docs/benchmarks.md results', () => {
  const page = readPage(BENCH_PAGE);
  const results = readResults(`${ROOT}/benchmarks/results/latest.json`);

  it('are what scripts/bench-table.ts renders from benchmarks/results/latest.json', () => {
    expect(between(page, BENCH_MARKER)).toBe(renderBenchTable(results));
  });

  it('name the run: its date, the machine and every scenario of the file', () => {
    const table = between(page, BENCH_MARKER);
    expect(table).toContain(results.startedAt.slice(0, 10));
    expect(table).toContain(results.machine.cpuModel);
    for (const id of Object.keys(results.scenarios)) expect(table).toContain(`### \`${id}\``);
  });

  it('render a changed figure differently (the comparison can fail)', () => {
    const changed = structuredClone(results) as Results;
    if (changed.summary) changed.summary.rows[0]![1] += '0';
    else {
      // A file from before the summary table: per-scenario rows.
      const row = Object.values(changed.scenarios).flatMap((s) => s.rows ?? []).find((r) => typeof r.gateway === 'number')!;
      row.gateway = (row.gateway as number) * 2 + 1;
    }
    expect(renderBenchTable(changed)).not.toBe(renderBenchTable(results));
  });

  it('has no measured figure outside the generated section', () => {
    const rest = page.replace(between(page, BENCH_MARKER), '');
    expect(rest.match(/\d[\d.,]*\s*(?:µs|ms|req\/s|MB|×)/g) ?? []).toEqual([]);
  });
});
