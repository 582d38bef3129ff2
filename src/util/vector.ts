/**
 * Scale `v` to unit (L2) length, into `out` (a new Float32Array by default; pass `v` itself, when it
 * is a Float32Array, to normalise in place). Returns `out`, or undefined, leaving `out` untouched,
 * when `v` is zero or has a non-finite component: such a vector has no direction.
 */
export function l2normalize(v: ArrayLike<number>, out?: Float32Array): Float32Array | undefined {
  const n = v.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += v[i]! * v[i]!;
  if (!(sum > 0) || !Number.isFinite(sum)) return undefined;
  const inv = 1 / Math.sqrt(sum);
  const o = out ?? new Float32Array(n);
  for (let i = 0; i < n; i++) o[i] = v[i]! * inv;
  return o;
}

/** The dot product of two vectors of one length (the cosine similarity when both are unit length). */
export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
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
