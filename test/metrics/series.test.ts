import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CounterFamily, GaugeFamily, HistogramFamily } from '../../src/metrics/series.js';

describe('metric families with bound series', () => {
  it('a counter series is bound once and formatted by the prom-client registry', async () => {
    const registry = new Registry();
    const c = new CounterFamily('x_total', 'Things.', ['a', 'b'], registry);
    const cell = c.cell('one', 'two "quoted"');
    expect(c.cell('one', 'two "quoted"')).toBe(cell);
    cell.inc();
    cell.inc(2.5);
    cell.inc(-1); // a counter never goes down
    cell.inc(Number.NaN);
    c.cell('three', 'four').inc();
    expect(await registry.metrics()).toBe(
      ['# HELP x_total Things.', '# TYPE x_total counter', 'x_total{a="one",b="two \\"quoted\\""} 3.5', 'x_total{a="three",b="four"} 1', ''].join('\n'),
    );
  });

  it('rejects a label value count that does not match the label names', () => {
    const c = new CounterFamily('y_total', 'Y.', ['a', 'b'], new Registry());
    expect(() => c.cell('only-one')).toThrow(/expected 2 label values, got 1/);
  });

  it('a gauge goes up, down and is set', async () => {
    const registry = new Registry();
    const g = new GaugeFamily('g', 'G.', ['t'], registry);
    const cell = g.cell('a');
    cell.inc();
    cell.inc();
    cell.dec();
    expect(cell.value).toBe(1);
    cell.set(-4);
    expect(await registry.metrics()).toContain('g{t="a"} -4');
  });

  it('a histogram counts a value equal to a bound in that bucket, cumulatively, with +Inf, sum and count', async () => {
    const registry = new Registry();
    const h = new HistogramFamily('h_seconds', 'H.', ['e'], [1, 0.5, 2], registry); // sorted on construction
    const cell = h.cell('chat');
    for (const v of [0.1, 0.5, 0.7, 1, 2, 3, Number.POSITIVE_INFINITY, Number.NaN]) cell.observe(v);
    expect(await registry.metrics()).toBe(
      [
        '# HELP h_seconds H.',
        '# TYPE h_seconds histogram',
        'h_seconds_bucket{e="chat",le="0.5"} 2',
        'h_seconds_bucket{e="chat",le="1"} 4',
        'h_seconds_bucket{e="chat",le="2"} 5',
        'h_seconds_bucket{e="chat",le="+Inf"} 6',
        'h_seconds_sum{e="chat"} 7.3',
        'h_seconds_count{e="chat"} 6',
        '',
      ].join('\n'),
    );
  });

  it('resetMetrics forgets every series', async () => {
    const registry = new Registry();
    const c = new CounterFamily('z_total', 'Z.', ['a'], registry);
    c.cell('x').inc();
    registry.resetMetrics();
    expect(await registry.metrics()).toBe('# HELP z_total Z.\n# TYPE z_total counter\n');
    c.cell('x').inc();
    expect(await registry.metrics()).toContain('z_total{a="x"} 1');
  });
});
