/**
 * fast-check arbitraries read off zod schemas (not a test file itself). `valuesOf(schema)` builds
 * values shaped like the schema from its types and checks (lengths, bounds, integers, patterns,
 * enums, strict or loose objects); `nearMissesOf(schema)` takes such a value and breaks one field
 * (a bound crossed, a wrong type, an unknown key...). Refinements and transforms are not read: the
 * properties classify every value with the schema itself (`safeParse`) and assert what the gateway
 * answers for each class, so the generator only has to make both classes likely.
 */
import fc from 'fast-check';
import type { z } from 'zod';

type Schema = z.ZodType;
type Path = (string | number)[];

interface Def {
  type: string;
  checks?: { _zod: { def: Record<string, any> } }[];
  [k: string]: any;
}

const defOf = (s: Schema): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

export interface GenOptions {
  /** Arbitraries for schemas the generator cannot read (z.custom, transforms), by schema instance. */
  overrides?: ReadonlyMap<Schema, fc.Arbitrary<unknown>>;
  /** Nesting beyond which optional fields are left out and arrays kept at their minimum. */
  maxDepth?: number;
  /** Longest string generated where the schema allows more (values stay small; limits are fuzzed by nearMissesOf). */
  maxString?: number;
}

/** Any small JSON value (for unknown fields). */
export const smallJson = (): fc.Arbitrary<unknown> => fc.jsonValue({ maxDepth: 2, depthSize: 'small' });

interface Bounds {
  min?: number;
  max?: number;
  minExclusive?: boolean;
  maxExclusive?: boolean;
  minLength?: number;
  maxLength?: number;
  int?: boolean;
  pattern?: RegExp;
  format?: string;
}

function boundsOf(d: Def): Bounds {
  const b: Bounds = {};
  if (d.format === 'safeint' || d.format === 'int32' || d.format === 'uint32') b.int = true;
  if (d.format) b.format = d.format;
  if (d.pattern instanceof RegExp) b.pattern = d.pattern;
  for (const c of d.checks ?? []) {
    const cd = c._zod.def;
    if (cd.check === 'greater_than') {
      b.min = cd.value as number;
      b.minExclusive = !cd.inclusive;
    } else if (cd.check === 'less_than') {
      b.max = cd.value as number;
      b.maxExclusive = !cd.inclusive;
    } else if (cd.check === 'min_length') b.minLength = cd.minimum as number;
    else if (cd.check === 'max_length') b.maxLength = cd.maximum as number;
    else if (cd.check === 'length_equals') b.minLength = b.maxLength = cd.length as number;
    else if (cd.check === 'string_format' && cd.pattern instanceof RegExp) b.pattern = cd.pattern as RegExp;
    else if (cd.check === 'number_format') b.int = true;
  }
  return b;
}

/** Wrappers that do not change what a value looks like. */
const PASS_THROUGH = new Set(['readonly', 'catch', 'nonoptional', 'prefault', 'success']);

/** The schema under optional/nullable/default/pipe wrappers: where the constraints sit. */
export function coreOf(s: Schema): Schema {
  let cur = s;
  for (;;) {
    const d = defOf(cur);
    if (d.type === 'optional' || d.type === 'nullable' || d.type === 'default' || PASS_THROUGH.has(d.type)) cur = d.innerType as Schema;
    else if (d.type === 'pipe') cur = (defOf(d.in as Schema).type === 'transform' ? d.out : d.in) as Schema;
    else if (d.type === 'lazy') cur = d.getter() as Schema;
    else return cur;
  }
}

function stringArb(b: Bounds, o: Required<Omit<GenOptions, 'overrides'>>): fc.Arbitrary<string> {
  const minLength = b.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(b.maxLength ?? o.maxString, o.maxString));
  if (b.format === 'uuid' || b.format === 'guid') return fc.uuid();
  if (b.format === 'url') return fc.constantFrom('http://127.0.0.1:9/v1', 'https://127.0.0.1:9/');
  if (b.pattern) {
    // fast-check reads no flags: a case-insensitive pattern is drawn in the case it is written
    const re = b.pattern.flags.includes('i') ? new RegExp(b.pattern.source) : b.pattern;
    return fc.stringMatching(re, { size: 'xsmall' }).filter((s) => s.length >= minLength && s.length <= (b.maxLength ?? Infinity));
  }
  return fc.string({ minLength, maxLength, unit: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...'abcxyz019-_ .') }, { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) }) });
}

function numberArb(b: Bounds): fc.Arbitrary<number> {
  if (b.int) {
    const min = b.min === undefined ? -1_000_000 : b.minExclusive ? Math.floor(b.min) + 1 : Math.ceil(b.min);
    const max = b.max === undefined ? min + 2_000_000 : b.maxExclusive ? Math.ceil(b.max) - 1 : Math.floor(b.max);
    return fc.integer({ min, max: Math.max(min, max) });
  }
  const min = b.min ?? -1e6;
  const max = b.max ?? min + 2e6;
  return fc.oneof(
    fc.double({ min, max, minExcluded: !!b.minExclusive, maxExcluded: !!b.maxExclusive, noNaN: true, noDefaultInfinity: true }),
    fc.integer({ min: Math.ceil(min + (b.minExclusive ? 1e-9 : 0)), max: Math.floor(max - (b.maxExclusive ? 1e-9 : 0)) }),
  );
}

/** Values shaped like `schema`. */
export function valuesOf(schema: Schema, opts: GenOptions = {}): fc.Arbitrary<unknown> {
  const o = { maxDepth: opts.maxDepth ?? 3, maxString: opts.maxString ?? 12 };
  const overrides = opts.overrides ?? new Map();
  const go = (s: Schema, depth: number): fc.Arbitrary<unknown> => {
    const over = overrides.get(s);
    if (over) return over;
    const d = defOf(s);
    const deep = depth >= o.maxDepth;
    switch (d.type) {
      case 'string':
        return stringArb(boundsOf(d), o);
      case 'number':
        return numberArb(boundsOf(d));
      case 'int':
        return numberArb({ ...boundsOf(d), int: true });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'undefined':
        return fc.constant(undefined);
      case 'literal':
        return fc.constantFrom(...(d.values as unknown[]));
      case 'enum':
        return fc.constantFrom(...Object.values(d.entries as Record<string, unknown>));
      case 'optional':
      case 'default':
        return go(d.innerType as Schema, depth);
      case 'nullable':
        return fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 4, arbitrary: go(d.innerType as Schema, depth) });
      case 'pipe':
        return defOf(d.in as Schema).type === 'transform' ? go(d.out as Schema, depth) : go(d.in as Schema, depth);
      case 'lazy':
        return go(d.getter() as Schema, depth);
      case 'union':
        return fc.oneof(...(d.options as Schema[]).map((x) => go(x, depth)));
      case 'array': {
        const b = boundsOf(d);
        const minLength = b.minLength ?? 0;
        const maxLength = deep ? minLength : Math.max(minLength, Math.min(b.maxLength ?? minLength + 3, minLength + 3));
        return fc.array(go(d.element as Schema, depth + 1), { minLength, maxLength });
      }
      case 'tuple':
        return fc.tuple(...(d.items as Schema[]).map((x) => go(x, depth + 1)));
      case 'record':
        return fc.dictionary(go(d.keyType as Schema, depth + 1) as fc.Arbitrary<string>, go(d.valueType as Schema, depth + 1), { maxKeys: deep ? 0 : 3 });
      case 'object': {
        const shape = d.shape as Record<string, Schema>;
        const arbs: Record<string, fc.Arbitrary<unknown>> = {};
        const required: string[] = [];
        for (const k of Object.keys(shape)) {
          const field = shape[k]!;
          const t = defOf(field).type;
          const optional = t === 'optional' || t === 'default';
          if (!optional) required.push(k);
          if (optional && deep) continue;
          arbs[k] = go(field, depth + 1);
        }
        const base = fc.record(arbs, { requiredKeys: required });
        const catchall = d.catchall ? defOf(d.catchall as Schema).type : undefined;
        if (catchall === undefined || catchall === 'never' || deep) return base;
        const extra = fc.dictionary(fc.constantFrom('x_extra', 'vendor_field', 'metadata2'), go(d.catchall as Schema, depth + 1), { maxKeys: 1 });
        return fc.tuple(base, fc.option(extra, { freq: 4 })).map(([b, e]) => (e ? { ...e, ...b } : b));
      }
      default:
        // unknown, any, custom, transform: any small JSON
        return smallJson();
    }
  };
  return go(schema, 0);
}

/** Values that break `core` (already unwrapped): bounds crossed, wrong types, unknown keys. */
function breaking(core: Schema): fc.Arbitrary<unknown> {
  const d = defOf(core);
  const b = boundsOf(d);
  const wrongType = fc.constantFrom<unknown>('x', 17, true, [], {}, -1.5);
  const out: fc.Arbitrary<unknown>[] = [wrongType];
  if (d.type === 'number' || d.type === 'int') {
    if (b.min !== undefined) out.push(fc.constantFrom(b.min - 1, b.minExclusive ? b.min : b.min - 1e-6, -Number.MAX_VALUE));
    if (b.max !== undefined) out.push(fc.constantFrom(b.max + 1, b.maxExclusive ? b.max : b.max + 1e-6, Number.MAX_VALUE));
    if (b.int) out.push(fc.constantFrom(0.5, 1.25, 2 ** 60));
    out.push(fc.constantFrom('1', null));
  } else if (d.type === 'string') {
    if (b.minLength !== undefined && b.minLength > 0) out.push(fc.string({ maxLength: b.minLength - 1 }));
    if (b.maxLength !== undefined) out.push(fc.string({ minLength: b.maxLength + 1, maxLength: b.maxLength + 8 }));
    if (b.pattern) out.push(fc.string({ maxLength: 10 }).filter((s) => !b.pattern!.test(s)));
    out.push(fc.constantFrom(null, 0, ['a']));
  } else if (d.type === 'enum') {
    out.push(fc.string({ maxLength: 8 }).filter((s) => !Object.values(d.entries as object).includes(s)));
  } else if (d.type === 'array') {
    if (b.minLength !== undefined && b.minLength > 0) out.push(fc.constant([]));
    if (b.maxLength !== undefined) out.push(fc.constant(Array.from({ length: b.maxLength + 1 }, () => null)));
    out.push(fc.constantFrom('not-an-array', { '0': 1 }));
  } else if (d.type === 'object') {
    out.push(fc.constantFrom(null, 'str', [1]));
  } else if (d.type === 'boolean') {
    out.push(fc.constantFrom('true', 1, 0, 'yes'));
  }
  return fc.oneof(...out);
}

/** Each place in `value` that `schema` describes: its path and the (unwrapped) schema there. */
function placesIn(schema: Schema, value: unknown, path: Path, out: [Path, Schema][], depth: number): void {
  if (depth > 8) return;
  const core = coreOf(schema);
  out.push([path, core]);
  const d = defOf(core);
  if (d.type === 'object' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const shape = d.shape as Record<string, Schema>;
    for (const k of Object.keys(shape)) {
      if (Object.hasOwn(value, k)) placesIn(shape[k]!, (value as Record<string, unknown>)[k], [...path, k], out, depth + 1);
    }
  } else if (d.type === 'array' && Array.isArray(value)) {
    value.forEach((v, i) => placesIn(d.element as Schema, v, [...path, i], out, depth + 1));
  } else if (d.type === 'union') {
    // the first option whose type fits
    for (const opt of d.options as Schema[]) {
      const t = defOf(coreOf(opt)).type;
      if ((t === 'array') === Array.isArray(value) && (t === 'object') === (typeof value === 'object' && value !== null && !Array.isArray(value))) {
        if (t === 'array' || t === 'object') placesIn(opt, value, path, out, depth + 1);
        break;
      }
    }
  }
}

export function setAt(value: unknown, path: Path, v: unknown): unknown {
  if (path.length === 0) return v;
  const [head, ...rest] = path;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
  copy[head!] = setAt(copy[head!], rest, v);
  return copy;
}

/** A value of `base` with one place broken, and that place's path. */
export interface NearMiss {
  value: unknown;
  path: Path;
}

/** One field of a value from `base` replaced by something its schema refuses, or an unknown key added to a strict object. */
export function nearMissesOf(schema: Schema, base: fc.Arbitrary<unknown>): fc.Arbitrary<NearMiss> {
  return base.chain((v) => {
    const places: [Path, Schema][] = [];
    placesIn(schema, v, [], places, 0);
    return fc.constantFrom(...places).chain(([path, core]): fc.Arbitrary<NearMiss> => {
      const d = defOf(core);
      const strict = d.type === 'object' && d.catchall && defOf(d.catchall as Schema).type === 'never';
      const replace = breaking(core).map((bad) => ({ value: setAt(v, path, bad), path }));
      if (!strict) return replace;
      const unknownKey = fc.constantFrom('unknown_field', 'Model', '__proto__x').map((k) => ({ value: setAt(v, [...path, k], 1), path: [...path, k] }));
      return fc.oneof(replace, unknownKey);
    });
  });
}
