/**
 * Redaction by kind: the one place that knows what a secret looks like in what the gateway prints
 * (`sluice plan`, the management APIs' answers, error bodies, log lines). Three kinds:
 *
 * - a field whose schema is marked secret (`secret(schema)`): its whole value is replaced;
 * - a header map marked secret (`secret(schema, 'header-values')`, the headers a check sends to its
 *   webhook or log receiver): each value is replaced, the header names are kept;
 * - a URL with userinfo (`https://user:password@host`), wherever it appears, in any string: the
 *   userinfo is replaced.
 *
 * Fields are marked where their schemas are written, and each module that owns an object schema
 * declares it (`declareSecretFields`), so the redactor knows the marked fields by name without a
 * list of its own. A name once declared secret is redacted in every object printed: over-redacting
 * a field of the same name elsewhere costs a value in a printout, never a secret.
 */
import type { z } from 'zod';
import { registry } from 'zod';

export const REDACTED = '[redacted]';

/** `value`: the whole value is secret; `header-values`: the values of a name → value map are. */
export type SecretKind = 'value' | 'header-values';

/** The schema-level marks. */
export const secretMarks = registry<{ secret: SecretKind }>();

/** Marks `schema` as holding a secret of `kind`; returns it. */
export function secret<T extends z.ZodType>(schema: T, kind: SecretKind = 'value'): T {
  secretMarks.add(schema, { secret: kind });
  return schema;
}

interface Wrapper {
  _zod: { def: { type: string; innerType?: z.ZodType; in?: z.ZodType } };
}

/** The mark of a field's schema, looked up through optional, nullable, default and pipe wrappers. */
export function secretKindOf(schema: z.ZodType): SecretKind | undefined {
  let s: z.ZodType | undefined = schema;
  for (let i = 0; s !== undefined && i < 16; i++) {
    const mark = secretMarks.get(s);
    if (mark) return mark.secret;
    const def: Wrapper['_zod']['def'] = (s as unknown as Wrapper)._zod.def;
    s = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
  }
  return undefined;
}

const secretFields = new Map<string, SecretKind>();

/**
 * Makes the marked fields of an object shape known to the redactor by name; with a schema, those of
 * its shape when it is an object schema.
 */
export function declareSecretFields(shape: Readonly<Record<string, z.ZodType>> | z.ZodType): void {
  const fields = '_zod' in shape ? (shape as { shape?: Record<string, z.ZodType> }).shape : (shape as Record<string, z.ZodType>);
  if (fields === undefined || typeof fields !== 'object') return;
  for (const [name, schema] of Object.entries(fields)) {
    const kind = secretKindOf(schema);
    // The whole value wins over its values only: a name marked both ways is redacted whole.
    if (kind !== undefined && secretFields.get(name) !== 'value') secretFields.set(name, kind);
  }
}

/** The kind of the field `name`, when a declared schema marks it. */
export const secretFieldKind = (name: string): SecretKind | undefined => secretFields.get(name);

/** `scheme://userinfo@`: the userinfo is everything between `//` and the last `@` before the path. */
const USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^\s/?#"'<>]*@/gi;

/** `text` with the userinfo of every URL in it replaced (`https://[redacted]@host/`). */
export function redactUrls(text: string): string {
  return text.includes('@') ? text.replace(USERINFO, `$1${REDACTED}@`) : text;
}

const MAX_DEPTH = 200;

/**
 * A copy of `value` as JSON would print it, with every secret redacted by its kind. Values that
 * print as JSON (`toJSON`) are redacted as they print; functions and undefined are dropped.
 */
export function redact<T>(value: T): T {
  return walk(value, 0) as T;
}

function walk(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return redactUrls(v);
  if (v === null || typeof v !== 'object') return v;
  if (depth > MAX_DEPTH) return REDACTED;
  const json = (v as { toJSON?: unknown }).toJSON;
  if (typeof json === 'function') return walk(json.call(v), depth + 1);
  if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === undefined || typeof x === 'function') continue;
    const kind = secretFields.get(k);
    if (kind === undefined || x === null) out[k] = walk(x, depth + 1);
    else if (kind === 'header-values' && typeof x === 'object' && !Array.isArray(x)) {
      out[k] = Object.fromEntries(Object.keys(x).map((h) => [h, REDACTED]));
    } else out[k] = REDACTED;
  }
  return out;
}
