import { gaussian, seededRandom } from '../../src/util/prng.js';
import { dot, l2normalize } from '../../src/util/vector.js';

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
    const u = l2normalize(v)!;
    const r = random(v.length);
    const d = dot(r, u);
    for (let i = 0; i < r.length; i++) r[i] = r[i]! - d * u[i]!;
    const w = l2normalize(r)!;
    const s = Math.sqrt(1 - cos * cos);
    const q = new Float32Array(v.length);
    for (let i = 0; i < q.length; i++) q[i] = cos * u[i]! + s * w[i]!;
    return q;
  };
  return { random, near, uniform: seededRandom(seed ^ 0xabcdef) };
}

export function cosine(a: Float32Array, b: Float32Array): number {
  const x = l2normalize(a)!;
  const y = l2normalize(b)!;
  return dot(x, y);
}
