/**
 * A request's numeric parameters brought into the range a provider takes. The gateway's edge
 * validates OpenAI's ranges; a provider with narrower ones (Anthropic's temperature 0–1, Gemini's
 * candidate count 1–8) would answer 400 for a value the client was allowed to send, which would also
 * stop a fallback from reaching it. Out-of-range values are clamped to the nearest bound (values
 * inside the range are sent untouched, so the same request means the same thing on every target),
 * and every change is said: `x-gateway-params-mapped` and the request log line.
 * docs/range-mapping.md lists the ranges per provider; docs/decisions/range-mapping.md says why.
 */

/** One parameter's range on one provider (or one model family of it). */
export interface ParamRange {
  /** Top-level field of the OpenAI-shaped body, e.g. `temperature`. */
  field: string;
  min?: number;
  max?: number;
  /** The upper bound is not itself allowed: a value at or above it is sent as `max - 0.01`. */
  maxExclusive?: boolean;
  /** Only for models whose id matches (a model family on a multi-vendor platform). */
  models?: RegExp;
}

/** The body with out-of-range values clamped, and the changes as `field=from->to`, comma-separated. */
export interface Mapped {
  body: Record<string, unknown>;
  said: string;
}

/** The value `v` becomes under `r`, or `v` itself when it is in range (or not a number). */
function clamp(v: number, r: ParamRange): number {
  if (r.min !== undefined && v < r.min) return r.min;
  if (r.max !== undefined) {
    if (r.maxExclusive === true ? v >= r.max : v > r.max) return r.maxExclusive === true ? Math.round((r.max - 0.01) * 100) / 100 : r.max;
  }
  return v;
}

/**
 * `body` with each ranged field clamped; undefined when nothing is out of range (the common case
 * allocates nothing: a field absent or in range costs a property read and a comparison).
 */
export function mapRanges(ranges: readonly ParamRange[], body: Record<string, unknown>): Mapped | undefined {
  let out: Record<string, unknown> | undefined;
  let said = '';
  for (const r of ranges) {
    const v = (out ?? body)[r.field];
    if (typeof v !== 'number') continue;
    const to = clamp(v, r);
    if (to === v) continue;
    if (r.models && !(typeof body.model === 'string' && r.models.test(body.model))) continue;
    (out ??= { ...body })[r.field] = to;
    said += `${said === '' ? '' : ','}${r.field}=${v}->${to}`;
  }
  return out && { body: out, said };
}
