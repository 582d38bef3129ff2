// Minimal typings for the parts of autocannon 9's programmatic API the benchmarks use.
declare module 'autocannon' {
  interface AutocannonOptions {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    timeout?: number;
    overallRate?: number;
    connectionRate?: number;
    ignoreCoordinatedOmission?: boolean;
    workers?: number;
    excludeErrorStats?: boolean;
  }
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9?: number;
    [k: string]: number | undefined;
  }
  interface AutocannonResult {
    url: string;
    duration: number;
    start: Date;
    finish: Date;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    resets: number;
    latency: Histogram;
    requests: Histogram & { sent: number };
    throughput: Histogram;
    connections: number;
    pipelining: number;
  }
  interface Instance extends PromiseLike<AutocannonResult> {
    stop(): void;
  }
  function autocannon(opts: AutocannonOptions): Instance;
  export default autocannon;
  export type { AutocannonOptions, AutocannonResult };
}
