import { LshIndex, type LshOptions } from '../lsh-index.js';
import type { VectorIndex, VectorMatch } from '../vector-index.js';

export interface MemoryVectorIndexOptions extends LshOptions {}

/** The embedded default: an LshIndex in this process, per partition, bounded, with TTLs. */
export class MemoryVectorIndex implements VectorIndex {
  readonly kind = 'memory' as const;
  private readonly lsh: LshIndex;
  private readonly now: () => number;

  constructor(opts: MemoryVectorIndexOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.lsh = new LshIndex({ ...opts, now: this.now });
  }

  async add(partition: string, id: string, vector: Float32Array, ttlSeconds: number): Promise<void> {
    if (!(ttlSeconds > 0)) return;
    this.lsh.add(partition, id, vector, this.now() + ttlSeconds * 1000);
  }

  async search(partition: string, vector: Float32Array, threshold: number): Promise<VectorMatch | undefined> {
    return this.lsh.search(partition, vector, threshold);
  }

  /** Synchronous search (benchmarks, and callers that want no promise). */
  searchSync(partition: string, vector: Float32Array, threshold: number): VectorMatch | undefined {
    return this.lsh.search(partition, vector, threshold);
  }

  size(): number {
    return this.lsh.size;
  }
}
