import { seededRandom } from '../util/prng.js';

/**
 * The "hyperplanes": rows of a seeded pseudo-random rotation, HD₃HD₂HD₁ (random ±1 diagonals D and
 * the Walsh–Hadamard transform H, on the vector zero-padded to a power of two). Projecting on them
 * costs O(P log P) instead of O(P · hyperplanes) for dense Gaussian ones, and three rounds make the
 * rotation close to a uniformly random one (Andoni et al. 2015, "Practical and optimal LSH for
 * angular distance"), so each sign bit still agrees for two vectors at angle θ with probability
 * ≈ 1 − θ/π. Rows of one rotation are orthogonal, which only helps (Ji et al. 2012, "Super-bit LSH").
 * One rotation yields P projections; more are stacked when tables × bits exceeds P.
 */
export interface Hasher {
  dims: number;
  /** Padded length: a power of two ≥ dims. */
  width: number;
  rotations: number;
  /** rotations × 3 × width signs (±1). */
  signs: Float64Array;
}

const hasherCache = new Map<string, Hasher>();

export function hasherFor(dims: number, projections: number, seed: number): Hasher {
  const key = `${seed}:${projections}:${dims}`;
  let h = hasherCache.get(key);
  if (!h) {
    let width = 1;
    while (width < dims) width <<= 1;
    const rotations = Math.ceil(projections / width);
    const rand = seededRandom(seed ^ Math.imul(dims, 0x9e3779b1));
    const signs = new Float64Array(rotations * 3 * width);
    for (let i = 0; i < signs.length; i++) signs[i] = rand() < 0.5 ? -1 : 1;
    h = { dims, width, rotations, signs };
    hasherCache.set(key, h);
  }
  return h;
}

/** In-place fast Walsh–Hadamard transform (unnormalised). */
function fwht(a: Float64Array, n: number): void {
  for (let h = 1; h < n; h <<= 1) {
    for (let i = 0; i < n; i += h << 1) {
      for (let j = i, end = i + h; j < end; j++) {
        const x = a[j]!;
        const y = a[j + h]!;
        a[j] = x + y;
        a[j + h] = x - y;
      }
    }
  }
}

/** Projections of a unit vector `v` on every hyperplane of `hasher`, into `proj`; `scratch` holds at least `hasher.width`. */
export function project(hasher: Hasher, v: Float32Array, scratch: Float64Array, proj: Float64Array): void {
  const { width, rotations, signs, dims } = hasher;
  const a = scratch;
  for (let r = 0, out = 0; r < rotations; r++) {
    const s = r * 3 * width;
    for (let i = 0; i < dims; i++) a[i] = v[i]! * signs[s + i]!;
    for (let i = dims; i < width; i++) a[i] = 0;
    fwht(a, width);
    for (let i = 0; i < width; i++) a[i] = a[i]! * signs[s + width + i]!;
    fwht(a, width);
    for (let i = 0; i < width; i++) a[i] = a[i]! * signs[s + 2 * width + i]!;
    fwht(a, width);
    for (let i = 0; i < width && out < proj.length; i++, out++) proj[out] = a[i]!;
  }
}
