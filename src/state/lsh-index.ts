import { dot, l2normalize } from '../util/vector.js';
import type { VectorMatch } from './vector-index.js';
import { hasherFor, project, type Hasher } from './lsh-hasher.js';

/**
 * Approximate nearest-neighbour search by cosine similarity: random-hyperplane LSH (SimHash).
 *
 * Each of `tables` hash tables maps a vector to `bits` sign bits (which side of a random hyperplane
 * it lies on). Two vectors at angle θ agree on one bit with probability 1 − θ/π, so near-duplicates
 * share a bucket in at least one table with high probability while unrelated vectors rarely do.
 * A search looks at the query's bucket in every table, plus (multi-probe) the `probes` neighbouring
 * buckets reached by flipping the query's least certain bits, and verifies every candidate by exact
 * cosine similarity. Candidates are therefore never false positives; misses are possible
 * (recall < 1) and are what `tables`, `bits` and `probes` trade against speed.
 *
 * Pure: no I/O and no timers; the clock is injected. No adapter knowledge: the memory adapter holds
 * one as its index, the Redis adapter one as its local mirror.
 */

export interface LshOptions {
  /** Hash tables (default 16). More tables: better recall, more memory and candidates. */
  tables?: number;
  /** Bits per table (default 14): 2^bits buckets per table. More bits: fewer candidates, lower recall. */
  bits?: number;
  /**
   * Extra buckets probed per table, flipping the query's least certain bits one at a time. Default:
   * by threshold, 1 at ≥ 0.95, 2 at ≥ 0.9, else 3 (a lower threshold needs a wider net).
   */
  probes?: number;
  /** Seed for the hyperplanes (default fixed): instances with one seed hash alike. */
  seed?: number;
  /** Entries held across all partitions (default 100,000); the oldest is evicted first. */
  maxEntries?: number;
  /** Clock in ms (tests inject one). */
  now?: () => number;
}

interface Entry {
  /** partition + NUL + id: the key in the insertion-ordered map. */
  key: string;
  id: string;
  part: Partition;
  vec: Float32Array;
  expiresAt: number;
  codes: Uint32Array;
  /** The last search that looked at this entry (dedup across tables). */
  mark: number;
}

interface Partition {
  name: string;
  dims: number;
  hasher: Hasher;
  /** One map per table: bucket code → entries. */
  buckets: Map<number, Entry[]>[];
  count: number;
}

const DEFAULTS = { tables: 16, bits: 14, seed: 0x5eed, maxEntries: 100_000 };

/** Multi-probe width when not configured: lower thresholds need more probes for the same recall. */
function autoProbes(threshold: number): number {
  return threshold >= 0.95 ? 1 : threshold >= 0.9 ? 2 : 3;
}

export class LshIndex {
  readonly tables: number;
  readonly bits: number;
  /** Fixed multi-probe width, or undefined for automatic (by threshold). */
  readonly probes: number | undefined;
  readonly maxEntries: number;
  private readonly seed: number;
  private readonly now: () => number;
  /** Insertion order = age: the first entry is the oldest. */
  private readonly entries = new Map<string, Entry>();
  /** partition name → dimension count → partition. */
  private readonly partitions = new Map<string, Map<number, Partition>>();
  private stamp = 0;
  private readonly proj: Float64Array;
  private scratch = new Float64Array(0);

  constructor(opts: LshOptions = {}) {
    this.tables = opts.tables ?? DEFAULTS.tables;
    this.bits = opts.bits ?? DEFAULTS.bits;
    this.probes = opts.probes === undefined ? undefined : Math.max(0, Math.min(opts.probes, this.bits));
    this.seed = opts.seed ?? DEFAULTS.seed;
    this.maxEntries = opts.maxEntries ?? DEFAULTS.maxEntries;
    this.now = opts.now ?? Date.now;
    if (!(this.tables >= 1 && this.bits >= 1 && this.bits <= 30)) throw new Error('LshIndex: tables ≥ 1 and 1 ≤ bits ≤ 30');
    if (!(this.maxEntries >= 1)) throw new Error('LshIndex: maxEntries must be at least 1');
    this.proj = new Float64Array(this.tables * this.bits);
  }

  /** Entries held (expired ones not yet dropped included). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Store (or replace) `id` in `partition` until `expiresAt` (ms, on the injected clock). The vector
   * is copied and normalised; a zero vector or a past expiry is refused (returns false).
   */
  add(partition: string, id: string, vector: ArrayLike<number>, expiresAt: number): boolean {
    const vec = l2normalize(vector);
    if (!vec) return false;
    const now = this.now();
    if (!(expiresAt > now)) return false;
    this.delete(partition, id);
    const part = this.partition(partition, vec.length, true)!;
    this.project(part, vec);
    const codes = new Uint32Array(this.tables);
    for (let t = 0; t < this.tables; t++) codes[t] = this.code(t);
    const e: Entry = { key: `${partition}\u0000${id}`, id, part, vec, expiresAt, codes, mark: 0 };
    for (let t = 0; t < this.tables; t++) {
      const table = part.buckets[t]!;
      const bucket = table.get(codes[t]!);
      if (bucket) bucket.push(e);
      else table.set(codes[t]!, [e]);
    }
    part.count++;
    this.entries.set(e.key, e);
    this.sweep(now);
    return true;
  }

  /** The most similar live entry of `partition` with cosine similarity ≥ threshold, if any. */
  search(partition: string, vector: ArrayLike<number>, threshold: number): VectorMatch | undefined {
    const part = this.partitions.get(partition)?.get(vector.length);
    if (!part || part.count === 0) return undefined;
    const q = l2normalize(vector);
    if (!q) return undefined;
    const now = this.now();
    this.project(part, q);
    const stamp = ++this.stamp;
    let best: Entry | undefined;
    let bestScore = -Infinity;
    let expired: Entry[] | undefined;
    const probes = Math.min(this.probes ?? autoProbes(threshold), this.bits);
    for (let t = 0; t < this.tables; t++) {
      const table = part.buckets[t]!;
      const code = this.code(t);
      for (let p = 0, flipped = 0; p <= probes; p++) {
        let c = code;
        if (p > 0) {
          const bit = this.leastCertain(t, flipped);
          flipped |= 1 << bit;
          c = code ^ (1 << bit);
        }
        const bucket = table.get(c);
        if (!bucket) continue;
        for (let i = 0; i < bucket.length; i++) {
          const e = bucket[i]!;
          if (e.mark === stamp) continue;
          e.mark = stamp;
          if (e.expiresAt <= now) {
            (expired ??= []).push(e);
            continue;
          }
          const s = dot(q, e.vec);
          if (s >= threshold && s > bestScore) {
            bestScore = s;
            best = e;
          }
        }
      }
    }
    if (expired) for (const e of expired) this.unlink(e);
    return best ? { id: best.id, score: Math.min(1, bestScore) } : undefined;
  }

  /** Whether a live entry `id` is held in `partition`. */
  has(partition: string, id: string): boolean {
    const e = this.entries.get(`${partition}\u0000${id}`);
    return e !== undefined && e.expiresAt > this.now();
  }

  /** The expiry of a live entry `id` in `partition`, or undefined. */
  expiresAt(partition: string, id: string): number | undefined {
    const e = this.entries.get(`${partition}\u0000${id}`);
    return e !== undefined && e.expiresAt > this.now() ? e.expiresAt : undefined;
  }

  /** Remove `id` from `partition`. */
  delete(partition: string, id: string): boolean {
    const e = this.entries.get(`${partition}\u0000${id}`);
    if (!e) return false;
    this.unlink(e);
    return true;
  }

  /** Drop every expired entry now (otherwise they go lazily). Returns how many were dropped. */
  prune(): number {
    const now = this.now();
    let n = 0;
    for (const e of [...this.entries.values()]) {
      if (e.expiresAt <= now) {
        this.unlink(e);
        n++;
      }
    }
    return n;
  }

  clear(): void {
    this.entries.clear();
    this.partitions.clear();
  }

  private partition(name: string, dims: number, create: boolean): Partition | undefined {
    let byDims = this.partitions.get(name);
    let part = byDims?.get(dims);
    if (!part && create) {
      if (!byDims) this.partitions.set(name, (byDims = new Map()));
      const hasher = hasherFor(dims, this.tables * this.bits, this.seed);
      if (this.scratch.length < hasher.width) this.scratch = new Float64Array(hasher.width);
      part = { name, dims, hasher, buckets: Array.from({ length: this.tables }, () => new Map()), count: 0 };
      byDims.set(dims, part);
    }
    return part;
  }

  /** Projections of a unit vector on every hyperplane, into `this.proj`. */
  private project(part: Partition, v: Float32Array): void {
    project(part.hasher, v, this.scratch, this.proj);
  }

  private code(t: number): number {
    let c = 0;
    const off = t * this.bits;
    for (let b = 0; b < this.bits; b++) if (this.proj[off + b]! >= 0) c |= 1 << b;
    return c;
  }

  /** The bit of table t whose projection is closest to its hyperplane, skipping the bits in `skip`. */
  private leastCertain(t: number, skip: number): number {
    const off = t * this.bits;
    let best = 0;
    let bestAbs = Infinity;
    for (let b = 0; b < this.bits; b++) {
      if (skip & (1 << b)) continue;
      const a = Math.abs(this.proj[off + b]!);
      if (a < bestAbs) {
        bestAbs = a;
        best = b;
      }
    }
    return best;
  }

  private unlink(e: Entry): void {
    if (this.entries.get(e.key) !== e) return;
    this.entries.delete(e.key);
    const part = e.part;
    for (let t = 0; t < this.tables; t++) {
      const table = part.buckets[t]!;
      const bucket = table.get(e.codes[t]!);
      if (!bucket) continue;
      const i = bucket.indexOf(e);
      if (i >= 0) {
        bucket[i] = bucket[bucket.length - 1]!;
        bucket.pop();
      }
      if (bucket.length === 0) table.delete(e.codes[t]!);
    }
    part.count--;
    if (part.count === 0) {
      const byDims = this.partitions.get(part.name);
      byDims?.delete(part.dims);
      if (byDims?.size === 0) this.partitions.delete(part.name);
    }
  }

  /** Keep the bound (evict the oldest) and drop a few expired entries from the old end. */
  private sweep(now: number): void {
    while (this.entries.size > this.maxEntries) {
      this.unlink(this.entries.values().next().value as Entry);
    }
    let checked = 0;
    for (const e of this.entries.values()) {
      if (++checked > 4) break;
      if (e.expiresAt <= now) this.unlink(e);
    }
  }
}
