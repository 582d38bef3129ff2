import { canonicalJson, sha256 } from '../util/canonical.js';
import type { Endpoint } from '../providers/types.js';
import { promptText } from './local-embedder.js';

/** Body fields that change how an answer is delivered, not what it is. */
const DELIVERY_ONLY = new Set(['stream', 'stream_options']);

/** The request body as it counts for the cache: keys sorted at every depth, delivery fields left out. */
export function canonicalBody(body: Record<string, unknown> | undefined): string {
  if (!body) return '';
  const kept: Record<string, unknown> = {};
  for (const k in body) if (!DELIVERY_ONLY.has(k)) kept[k] = body[k];
  return canonicalJson(kept);
}

/** What a cache key is made of: where the answer comes from, whose it is, and the request. */
export interface CacheKeyInput {
  /** Provider identity of the config level that declares the cache (plan/identity nodeIdentity). */
  identity: string;
  /** Does a conditional below that level route on metadata? Then metadata stays in the key. */
  routesOnMetadata: boolean;
  /** The gateway key's workspace: tenants never share entries. */
  workspace: string;
  metadata: Record<string, unknown> | undefined;
  /** x-gateway-cache-namespace: replaces metadata in the key. */
  namespace: string | undefined;
  endpoint: Endpoint;
  body: Record<string, unknown> | undefined;
  /** Request headers that change the answer (a Messages request's `anthropic-beta`); part of the key when given. */
  headers?: Record<string, string>;
  semantic: boolean;
}

export interface CacheKeys {
  /** Exact key of this request's answer. */
  key: string;
  /** Semantic partition (same model, identity, workspace, namespace) and the text to embed. */
  partition?: string;
  text?: string;
}

/** The keys of one request's answer. */
export function cacheKeys(k: CacheKeyInput): CacheKeys {
  const metadata = canonicalJson(k.metadata ?? {});
  const ns = k.namespace === undefined ? metadata : k.routesOnMetadata ? `${k.namespace}\n${metadata}` : k.namespace;
  const endpoint = k.headers === undefined ? k.endpoint : `${k.endpoint} ${canonicalJson(k.headers)}`;
  const scope = `${k.identity}\n${k.workspace}\n${ns}\n${endpoint}`;
  const key = `c:${sha256(`${scope}\n${canonicalBody(k.body)}`)}`;
  if (!k.semantic || k.endpoint === 'embeddings' || k.endpoint === 'models') return { key };
  const text = promptText(k.body);
  if (text === undefined) return { key };
  return { key, text, partition: `p:${sha256(`${scope}\n${String(k.body?.model ?? '')}`)}` };
}
