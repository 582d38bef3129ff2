/**
 * JSON from outside (request bodies, the inline config header, management bodies) is nested at most
 * MAX_JSON_DEPTH deep. `JSON.parse` itself copes with any depth, but what comes after does not: zod,
 * `JSON.stringify`, the usage estimate and the config compilers all recurse, and 5,000 levels
 * overflow the stack (a 500). Refusing right after the parse makes it a 400 that says why.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether a parsed JSON value nests objects and arrays deeper than `max` (a bare value is depth 0,
 * `[]` depth 1). A walk of the parsed value, not of its text: it visits only the objects and arrays
 * and the values they hold (a typical chat body: tens of them, under a microsecond), and it stops
 * going down at `max`, so it cannot overflow the stack itself.
 */
export function jsonTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (max === 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (v !== null && typeof v === 'object' && jsonTooDeep(v, max - 1)) return true;
    }
    return false;
  }
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== null && typeof v === 'object' && jsonTooDeep(v, max - 1)) return true;
  }
  return false;
}
