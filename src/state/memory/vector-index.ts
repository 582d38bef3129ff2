import type { VectorIndex, VectorMatch } from '../vector-index.js';

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
 * Pure: no I/O and no timers; the clock is injected. The Redis adapter uses it as its local mirror.
 */

export interface LshOptions {
  /** Hash tables (default 12). More tables: better recall, more memory and candidates. */
  tables?: number;
  /** Bits per table (default 12): 2^bits buckets per table. More bits: fewer candidates, lower recall. */
  bits?: number;
  /** Extra buckets probed per table, flipping the least certain bits one at a time (default 1). */
  probes?: number;
  /** Seed for the hyperplanes (default fixed): instances with one seed hash alike. */
  seed?: number;
  /** Entries held across all partitions (default 100,000); the oldest is evicted first. */
  maxEntries?: number;
  /** Clock in ms (tests inject one). */
  now?: () => number;
}

interface Entry {
  /** partition key + id: the key in the insertion-ordered map. */
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
  key: string;
  dims: number;
  planes: Float32Array;
  /** tables × 2^bits buckets, created on first use. */
  buckets: (Entry[] | undefined)[];
  count: number;
}

const DEFAULTS = { tables: 12, bits: 12, probes: 1, seed: 0x5eed, maxEntries: 100_000 };

/** A seeded PRNG (mulberry32): uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal samples from a uniform PRNG (Box–Muller). */
export function gaussian(rand: () => number): () => number {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const s = spare;
      spare = undefined;
      return s;
    }
    let u = 0;
    while (u === 0) u = rand();
    const v = rand();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

/** A unit-length copy of `v`, or undefined for a zero (or non-finite) vector. */
export function normalize(v: ArrayLike<number>): Float32Array | undefined {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  if (!(sum > 0) || !Number.isFinite(sum)) return undefined;
  const inv = 1 / Math.sqrt(sum);
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * inv;
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  const n = a.length;
  const m = n - (n % 4);
  let i = 0;
  for (; i < m; i += 4) {
    s0 += a[i]! * b[i]!;
    s1 += a[i + 1]! * b[i + 1]!;
    s2 += a[i + 2]! * b[i + 2]!;
    s3 += a[i + 3]! * b[i + 3]!;
  }
  for (; i < n; i++) s0 += a[i]! * b[i]!;
  return s0 + s1 + s2 + s3;
}

const planeCache = new Map<string, Float32Array>();

/** The hyperplanes for one dimension count: tables × bits normal vectors, generated once per process. */
function hyperplanes(dims: number, count: number, seed: number): Float32Array {
  const key = `${seed}:${count}:${dims}`;
  let planes = planeCache.get(key);
  if (!planes) {
    const g = gaussian(seededRandom(seed ^ Math.imul(dims, 0x9e3779b1)));
    planes = new Float32Array(count * dims);
    for (let i = 0; i < planes.length; i++) planes[i] = g();
    planeCache.set(key, planes);
  }
  return planes;
}

export class LshIndex {
  readonly tables: number;
  readonly bits: number;
  readonly probes: number;
  readonly maxEntries: number;
  private readonly seed: number;
  private readonly now: () => number;
  /** Insertion order = age: the first entry is the oldest. */
  private readonly entries = new Map<string, Entry>();
  private readonly partitions = new Map<string, Partition>();
  private stamp = 0;
  private proj = new Float32Array(0);

  constructor(opts: LshOptions = {}) {
    this.tables = opts.tables ?? DEFAULTS.tables;
    this.bits = opts.bits ?? DEFAULTS.bits;
    this.probes = Math.min(opts.probes ?? DEFAULTS.probes, this.bits);
    this.seed = opts.seed ?? DEFAULTS.seed;
    this.maxEntries = opts.maxEntries ?? DEFAULTS.maxEntries;
    this.now = opts.now ?? Date.now;
    if (!(this.tables >= 1 && this.bits >= 1 && this.bits <= 24)) throw new Error('LshIndex: tables ≥ 1 and 1 ≤ bits ≤ 24');
    if (!(this.maxEntries >= 1)) throw new Error('LshIndex: maxEntries must be at least 1');
    this.proj = new Float32Array(this.tables * this.bits);
  }

  /** Entries held (expired ones not yet dropped included). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Store (or replace) `id` in `partition` until `expiresAt` (ms, same clock as `now`). The vector
   * is copied and normalised; a zero vector is refused (returns false).
   */
  add(partition: string, id: string, vector: ArrayLike<number>, expiresAt: number): boolean {
    const vec = normalize(vector);
    if (!vec) return false;
    const now = this.now();
    if (expiresAt <= now) return false;
    const part = this.partition(partition, vec.length, true)!;
    const key = `${part.key}\u0000${id}`;
    const old = this.entries.get(key);
    if (old) this.unlink(old);
    this.project(part, vec);
    const codes = new Uint32Array(this.tables);
    for (let t = 0; t < this.tables; t++) codes[t] = this.code(t);
    const e: Entry = { key, id, part, vec, expiresAt, codes, mark: 0 };
    for (let t = 0; t < this.tables; t++) {
      const b = t * (1 << this.bits) + codes[t]!;
      (part.buckets[b] ??= []).push(e);
    }
    part.count++;
    this.entries.set(key, e);
    this.sweep(now);
    return true;
  }

  /** The most similar live entry of `partition` with cosine similarity ≥ threshold, if any. */
  search(partition: string, vector: ArrayLike<number>, threshold: number): VectorMatch | undefined {
    const part = this.partition(partition, vector.length, false);
    if (!part || part.count === 0) return undefined;
    const q = normalize(vector);
    if (!q) return undefined;
    const now = this.now();
    this.project(part, q);
    const stamp = ++this.stamp;
    const size = 1 << this.bits;
    let best: Entry | undefined;
    let bestScore = -Infinity;
    let expired: Entry[] | undefined;
    const visit = (bucket: Entry[] | undefined): void => {
      if (!bucket) return;
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
    };
    for (let t = 0; t < this.tables; t++) {
      const code = this.code(t);
      const base = t * size;
      visit(part.buckets[base + code]);
      for (let p = 0, flipped = 0; p < this.probes; p++) {
        const bit = this.leastCertain(t, flipped);
        flipped |= 1 << bit;
        visit(part.buckets[base + (code ^ (1 << bit))]);
      }
    }
    if (expired) for (const e of expired) this.delete(partition, e.id, e);
    return best ? { id: best.id, score: Math.min(1, bestScore) } : undefined;
  }

  has(partition: string, id: string): boolean {
    for (const part of this.partitions.values()) {
      if (part.key.startsWith(partition + '\u0000') && part.key.length === partition.length + 1 + String(part.dims).length) {
        const e = this.entries.get(`${part.key}\u0000${id}`);
        if (e && e.expiresAt > this.now()) return true;
      }
    }
    return false;
  }

  /** Remove `id` from `partition` (every dimension count). */
  delete(partition: string, id: string, known?: Entry): boolean {
    if (known) {
      if (this.entries.get(known.key) !== known) return false;
      this.unlink(known);
      return true;
    }
    let removed = false;
    for (const part of [...this.partitions.values()]) {
      if (part.key !== `${partition}\u0000${part.dims}`) continue;
      const e = this.entries.get(`${part.key}\u0000${id}`);
      if (e) {
        this.unlink(e);
        removed = true;
      }
    }
    return removed;
  }

  clear(): void {
    this.entries.clear();
    this.partitions.clear();
  }

  private partition(name: string, dims: number, create: boolean): Partition | undefined {
    const key = `${name}\u0000${dims}`;
    let part = this.partitions.get(key);
    if (!part && create) {
      part = {
        key,
        dims,
        planes: hyperplanes(dims, this.tables * this.bits, this.seed),
        buckets: new Array(this.tables << this.bits),
        count: 0,
      };
      this.partitions.set(key, part);
    }
    return part;
  }

  /** Projections of a unit vector on every hyperplane, into `this.proj`. */
  private project(part: Partition, v: Float32Array): void {
    const dims = part.dims;
    const planes = part.planes;
    const proj = this.proj;
    for (let h = 0, off = 0; h < proj.length; h++, off += dims) {
      let s0 = 0;
      let s1 = 0;
      let i = 0;
      for (; i + 1 < dims; i += 2) {
        s0 += planes[off + i]! * v[i]!;
        s1 += planes[off + i + 1]! * v[i + 1]!;
      }
      if (i < dims) s0 += planes[off + i]! * v[i]!;
      proj[h] = s0 + s1;
    }
  }

  private code(t: number): number {
    let c = 0;
    const off = t * this.bits;
    for (let b = 0; b < this.bits; b++) if (this.proj[off + b]! >= 0) c |= 1 << b;
    return c;
  }

  /** The bit of table t whose projection is closest to its hyperplane, skipping `skip`. */
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
    this.entries.delete(e.key);
    const part = e.part;
    const size = 1 << this.bits;
    for (let t = 0; t < this.tables; t++) {
      const b = t * size + e.codes[t]!;
      const bucket = part.buckets[b];
      if (!bucket) continue;
      const i = bucket.indexOf(e);
      if (i >= 0) {
        bucket[i] = bucket[bucket.length - 1]!;
        bucket.pop();
      }
      if (bucket.length === 0) part.buckets[b] = undefined;
    }
    part.count--;
    if (part.count === 0) this.partitions.delete(part.key);
  }

  /** Keep the bound (evict the oldest) and drop a few expired entries from the old end. */
  private sweep(now: number): void {
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.values().next().value as Entry;
      this.unlink(oldest);
    }
    let checked = 0;
    for (const e of this.entries.values()) {
      if (++checked > 4) break;
      if (e.expiresAt <= now) this.unlink(e);
    }
  }
}

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
