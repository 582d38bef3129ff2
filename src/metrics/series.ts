import type { Registry } from 'prom-client';

/**
 * Labelled metrics whose series are bound once and then updated with no label hashing and no
 * allocation: a hot path keeps the cell (`family.cell('a', 'b')`) and calls `inc` or `observe` on it.
 *
 * prom-client's own classes hash the label object into a string on every update (and histograms
 * build a closure and a pair object per observation), several times per proxied request. These
 * families register in a prom-client Registry like its own metrics (they
 * implement the `get()` it formats), so exposition, content types and default metrics stay
 * prom-client's.
 */

type Labels = Record<string, string>;
type Exemplar = { labelSet: Record<string, string>; value: number; timestamp: number };
type MetricValue = { value: number; labels: Record<string, string | number>; metricName?: string; exemplar?: Exemplar };
/** OpenMetrics caps an exemplar's label set at 128 characters: `trace_id` and its value. */
const EXEMPLAR_TRACE_MAX = 128 - 'trace_id'.length;
interface MetricObject {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  values: MetricValue[];
  aggregator: 'sum';
}

export class CounterCell {
  value = 0;
  /** Adds a finite, non-negative amount (anything else is ignored, as a counter cannot go down). */
  inc(by = 1): void {
    if (by >= 0 && by !== Infinity) this.value += by;
  }
}

export class GaugeCell {
  value = 0;
  inc(): void {
    this.value++;
  }
  dec(): void {
    this.value--;
  }
  set(v: number): void {
    this.value = v;
  }
}

/** Per bucket, the latest observation that named a trace: its trace id, value and time (epoch ms). */
export interface BucketExemplars {
  readonly trace: (string | undefined)[];
  readonly value: Float64Array;
  readonly time: Float64Array;
}

export class HistogramCell {
  /** Observations per bucket, not cumulative; the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  /** Made at the first observation with a trace id: a cell never given one holds none. */
  exemplars: BucketExemplars | undefined;
  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  /**
   * Non-finite values are ignored. With `traceId`, the observation becomes its bucket's exemplar
   * (the latest one wins; three stores into arrays made once, no allocation).
   */
  observe(v: number, traceId?: string): void {
    if (!Number.isFinite(v)) return;
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > b[i]!) i++;
    this.counts[i]!++;
    this.sum += v;
    this.count++;
    if (traceId !== undefined && traceId.length <= EXEMPLAR_TRACE_MAX) {
      const n = b.length + 1;
      const e = (this.exemplars ??= { trace: new Array<string | undefined>(n).fill(undefined), value: new Float64Array(n), time: new Float64Array(n) });
      e.trace[i] = traceId;
      e.value[i] = v;
      e.time[i] = Date.now();
    }
  }
}

/** Bucket `i`'s exemplar in prom-client's shape (its registry writes it in OpenMetrics only). */
function exemplarOf(e: BucketExemplars | undefined, i: number): Exemplar | undefined {
  const trace = e?.trace[i];
  return trace === undefined ? undefined : { labelSet: { trace_id: trace }, value: e!.value[i]!, timestamp: e!.time[i]! / 1000 };
}

abstract class Family<C> {
  abstract readonly type: MetricObject['type'];
  private readonly series = new Map<string, { labels: Labels; cell: C }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  protected abstract newCell(): C;
  protected abstract samples(labels: Labels, cell: C, out: MetricValue[]): void;

  /** The series for these label values (in `labelNames` order), created on first use. */
  cell(...values: string[]): C {
    const key = values.length === 1 ? values[0]! : values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      if (values.length !== this.labelNames.length) throw new Error(`${this.name}: expected ${this.labelNames.length} label values, got ${values.length}`);
      const labels: Labels = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i]!));
      s = { labels, cell: this.newCell() };
      this.series.set(key, s);
    }
    return s.cell;
  }

  /** What prom-client's Registry formats. */
  get(): Promise<MetricObject> {
    const values: MetricValue[] = [];
    for (const { labels, cell } of this.series.values()) this.samples(labels, cell, values);
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' });
  }

  /** Registry.resetMetrics(): every series is forgotten (handles already bound keep counting unseen). */
  reset(): void {
    this.series.clear();
  }
}

/** Counters and gauges: one sample per series, the cell's value. */
class ValueFamily<C extends { value: number }> extends Family<C> {
  constructor(
    readonly type: 'counter' | 'gauge',
    protected readonly newCell: () => C,
    name: string,
    help: string,
    labelNames: readonly string[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
  }
  protected samples(labels: Labels, cell: C, out: MetricValue[]): void {
    out.push({ value: cell.value, labels });
  }
}

export class CounterFamily extends ValueFamily<CounterCell> {
  constructor(name: string, help: string, labelNames: readonly string[], registry: Registry) {
    super('counter', () => new CounterCell(), name, help, labelNames, registry);
  }
}

export class GaugeFamily extends ValueFamily<GaugeCell> {
  constructor(name: string, help: string, labelNames: readonly string[], registry: Registry) {
    super('gauge', () => new GaugeCell(), name, help, labelNames, registry);
  }
}

export class HistogramFamily extends Family<HistogramCell> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];

  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[], registry: Registry) {
    super(name, help, labelNames, registry);
    this.bounds = [...buckets].sort((a, b) => a - b);
  }

  protected newCell(): HistogramCell {
    return new HistogramCell(this.bounds);
  }

  protected samples(labels: Labels, cell: HistogramCell, out: MetricValue[]): void {
    let cumulative = 0;
    const bucket = `${this.name}_bucket`;
    const ex = cell.exemplars;
    for (let i = 0; i <= this.bounds.length; i++) {
      cumulative += cell.counts[i]!;
      const v: MetricValue = { value: cumulative, labels: { ...labels, le: i < this.bounds.length ? this.bounds[i]! : '+Inf' }, metricName: bucket };
      const exemplar = exemplarOf(ex, i);
      if (exemplar) v.exemplar = exemplar;
      out.push(v);
    }
    out.push({ value: cell.sum, labels, metricName: `${this.name}_sum` });
    out.push({ value: cell.count, labels, metricName: `${this.name}_count` });
  }
}
