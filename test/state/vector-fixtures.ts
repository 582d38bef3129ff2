import { gaussian, normalize, seededRandom } from '../../src/state/memory/vector-index.js';

/** Seeded random vectors and near-duplicates at a chosen cosine similarity. */
export function vectorFactory(seed: number) {
  const g = gaussian(seededRandom(seed));
  const random = (dims: number): Float32Array => {
    const v = new Float32Array(dims);
    for (let i = 0; i < dims; i++) v[i] = g();
    return v;
  };
  /** A vector whose cosine similarity to `v` is exactly `cos` (up to float rounding). */
  const near = (v: Float32Array, cos: number): Float32Array => {
    const u = normalize(v)!;
    const r = random(v.length);
    let d = 0;
    for (let i = 0; i < r.length; i++) d += r[i]! * u[i]!;
    for (let i = 0; i < r.length; i++) r[i] = r[i]! - d * u[i]!;
    const w = normalize(r)!;
    const s = Math.sqrt(1 - cos * cos);
    const q = new Float32Array(v.length);
    for (let i = 0; i < q.length; i++) q[i] = cos * u[i]! + s * w[i]!;
    return q;
  };
  return { random, near, uniform: seededRandom(seed ^ 0xabcdef) };
}

export function cosine(a: Float32Array, b: Float32Array): number {
  const x = normalize(a)!;
  const y = normalize(b)!;
  let d = 0;
  for (let i = 0; i < x.length; i++) d += x[i]! * y[i]!;
  return d;
}
