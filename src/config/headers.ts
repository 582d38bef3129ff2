import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import { PROVIDER_FIELD_HEADERS, PROVIDER_FIELDS } from './provider-fields.js';

export type Headers = Record<string, string | string[] | undefined>;

const text = z.string().trim().min(1, 'must not be empty');
const int = z
  .string()
  .trim()
  .regex(/^\d+$/, 'must be a whole number of milliseconds')
  .transform(Number)
  .pipe(z.number().int().positive().max(86_400_000, 'must be at most 86400000 (one day)'));
const list = z
  .string()
  .trim()
  .transform((s, ctx) => {
    if (s.startsWith('[')) {
      try {
        return JSON.parse(s) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a comma list or a JSON array of header names' });
        return z.NEVER;
      }
    }
    return s.split(',').map((x) => x.trim()).filter((x) => x.length > 0);
  })
  .pipe(z.array(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'is not a header name')).min(1));
const bool = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true');

/**
 * Headers that set config fields: a table, header → field and how to read it. Loose headers fill the
 * config root where `x-gateway-config` does not set the field itself.
 */
export const CONFIG_HEADERS: readonly (readonly [header: string, field: string, schema: z.ZodType])[] = [
  ['x-gateway-provider', 'provider', text],
  ['x-gateway-virtual-key', 'virtual_key', text],
  ['x-gateway-request-timeout', 'request_timeout', int],
  ['x-gateway-forward-headers', 'forward_headers', list],
  // custom_host, vendor_*, deployment and cloud_* fields: each field's header is declared with it, and
  // read with the field's own schema (a region that is not a region is a 400 naming the header).
  ...PROVIDER_FIELD_HEADERS.map(([header, field]) => [header, field, text.pipe(PROVIDER_FIELDS[field] as z.ZodType<unknown, string>)] as const),
];

/**
 * Headers other gateways define that set no config field here: refused with a 400 naming the
 * header rather than ignored. Cloud C's request type selects nothing this gateway does differently
 * (Gemini chat is the one request type it sends). (Cloud A's model name fills `model_name`.)
 */
export const REFUSED_HEADERS: Readonly<Record<string, string>> = {
  'x-cloud-c-llm-request-type': 'this gateway sends one request type to cloud C (chat), so there is nothing to select',
};

/** Throws invalid_header for a REFUSED_HEADERS header (checked on every request, cached plan or not). */
export function refuseHeaders(headers: Headers): void {
  for (const name in REFUSED_HEADERS) {
    if (headers[name] !== undefined) {
      throw new GatewayError('invalid_header', `Header ${name} is not supported: ${REFUSED_HEADERS[name]}.`, { param: name });
    }
  }
}

/** Per-request settings that are not config fields. */
export const REQUEST_HEADERS = {
  traceId: 'x-gateway-trace-id',
  metadata: 'x-gateway-metadata',
  config: 'x-gateway-config',
  apiKey: 'x-gateway-api-key',
  cacheForceRefresh: 'x-gateway-cache-force-refresh',
  cacheNamespace: 'x-gateway-cache-namespace',
} as const;

export function headerValue(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function readHeader<T>(headers: Headers, name: string, schema: z.ZodType<T>): T | undefined {
  const raw = headerValue(headers, name);
  if (raw === undefined) return undefined;
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const msg = r.error.issues[0]?.message ?? 'is invalid';
  throw new GatewayError('invalid_header', `Invalid header ${name}: ${msg}`, {
    param: name,
    issues: r.error.issues.map((i) => ({ path: [name, ...(i.path as (string | number)[])], message: i.message, code: i.code })),
  });
}

/** Config fields given as loose headers (only those present). */
export function configFromHeaders(headers: Headers): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const [header, field, schema] of CONFIG_HEADERS) {
    if (headers[header] === undefined) continue;
    (out ??= {})[field] = readHeader(headers, header, schema);
  }
  return out;
}

// Built once: authentication and the resolver both read the bearer token on every request.
const BEARER = /^Bearer\s+(.+)$/i;

/** `Authorization: Bearer x` → `x`. */
export function bearerToken(headers: Headers): string | undefined {
  const v = headerValue(headers, 'authorization');
  if (!v) return undefined;
  const m = BEARER.exec(v);
  return m ? m[1]!.trim() : undefined;
}

const traceId = z
  .string()
  .min(1)
  .max(128, 'must be at most 128 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

const metadataValue = z.union([z.string().max(1024), z.number(), z.boolean(), z.null()]);
const metadata = z
  .string()
  .max(8192, 'must be at most 8192 bytes')
  .transform((s, ctx) => {
    try {
      return JSON.parse(s) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string().max(128), metadataValue, { error: 'must be a JSON object of string, number or boolean values' }));

const namespace = text.pipe(z.string().max(256, 'must be at most 256 characters'));

export interface RequestSettings {
  traceId?: string;
  metadata?: Record<string, unknown>;
  cacheForceRefresh?: boolean;
  cacheNamespace?: string;
}

export function requestSettings(headers: Headers): RequestSettings {
  const out: RequestSettings = {};
  const t = readHeader(headers, REQUEST_HEADERS.traceId, traceId);
  if (t !== undefined) out.traceId = t;
  const m = readHeader(headers, REQUEST_HEADERS.metadata, metadata);
  if (m !== undefined) out.metadata = m;
  const f = readHeader(headers, REQUEST_HEADERS.cacheForceRefresh, bool);
  if (f !== undefined) out.cacheForceRefresh = f;
  const n = readHeader(headers, REQUEST_HEADERS.cacheNamespace, namespace);
  if (n !== undefined) out.cacheNamespace = n;
  return out;
}
