import { hash } from 'node:crypto';

/** JSON with object keys sorted at every depth: the same request, whatever its key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  const parts: string[] = [];
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== undefined) parts.push(`${JSON.stringify(k)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

export const sha256 = (s: string): string => hash('sha256', s, 'base64url');

/** Body fields that change how an answer is delivered, not what it is. */
const DELIVERY_ONLY = new Set(['stream', 'stream_options']);

export function canonicalBody(body: Record<string, unknown> | undefined): string {
  if (!body) return '';
  const kept: Record<string, unknown> = {};
  for (const k in body) if (!DELIVERY_ONLY.has(k)) kept[k] = body[k];
  return canonicalJson(kept);
}
