import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { formatPath, toIssues } from './issues.js';
import { DESTINATION_FIELD_NAMES, PROVIDER_FIELDS_SHAPE } from './provider-fields.js';
import { declaredId, UsageLimitEntrySchema } from './usage-limits.js';
import { declaredPromptId, PromptEntrySchema } from './prompts.js';
import { API_KEY_SCOPES } from '../security/api-keys.js';
import { PricesSchema } from './prices.js';
import { ContextWindowsSchema } from './context-windows.js';

const str = z.string().min(1);

export const ApiKeyEntry = z.strictObject({
  key: z.string().min(16, 'a gateway key must be at least 16 characters'),
  name: str,
  workspace_id: str.optional(),
  organisation_id: str.optional(),
  /** `[admin]`: the key manages every workspace (of its organisation, when it names one) and the keys. */
  scopes: z.array(z.enum(API_KEY_SCOPES)).optional(),
});

/**
 * Which destination fields (provider-fields.ts) a request that uses a virtual key may set itself:
 * `true` every one its provider has, a list those named. Absent or `false`: none; the key's own
 * fields say where its secret goes, and a request that tries to change them is refused.
 */
export const AllowClientDestinationSchema = z.union([z.boolean(), z.array(z.enum(DESTINATION_FIELD_NAMES))]);

/** A stored credential: the provider and its target fields (the same field schemas as a config's). */
export const VirtualKeySchema = z.strictObject({
  provider: str,
  ...PROVIDER_FIELDS_SHAPE,
  allow_client_destination: AllowClientDestinationSchema.optional(),
});
export type VirtualKey = z.infer<typeof VirtualKeySchema>;

export const BootstrapSchema = z.strictObject({
  api_keys: z.array(ApiKeyEntry).default([]),
  virtual_keys: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'virtual key ids use letters, digits, _ . -'), VirtualKeySchema).default({}),
  /** Where the semantic cache gets embeddings; absent: the built-in local (lexical) embedder. */
  semantic_cache: z
    .strictObject({
      embeddings: z.strictObject({ virtual_key: str, model: str }),
    })
    .optional(),
  /** Operator overrides of a provider's default base URL (a corporate proxy, a test double). */
  provider_base_urls: z.record(str, z.url({ protocol: /^https?$/ })).default({}),
  /** Usage-limit policies stored at every start (the API's body, plus an optional fixed `id`). */
  usage_limits: z.array(UsageLimitEntrySchema).optional(),
  /** Prompt templates stored at every start (the API's body, plus an optional fixed `id`). */
  prompts: z.array(PromptEntrySchema).optional(),
  /** Prices over the shipped table: provider → model (or `*`) → {input, cached_input?, cache_write_input?, output}, USD per million tokens. */
  prices: PricesSchema.optional(),
  /** Context windows over the shipped table: model (or `*`, the default for unknown models) → tokens. */
  context_windows: ContextWindowsSchema.optional(),
});
export type Bootstrap = z.infer<typeof BootstrapSchema>;

export class BootstrapError extends Error {
  override name = 'BootstrapError';
}

/** Replace `${VAR}` and `${VAR:-default}` in every string of a parsed document. */
export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, path: (string | number)[] = []): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, fallback?: string) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      throw new BootstrapError(`${formatPath(path) || 'bootstrap'}: environment variable ${name} is not set`);
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolateEnv(v, env, [...path, i]));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolateEnv(v, env, [...path, k]);
    return out;
  }
  return value;
}

/**
 * Entries declared by the file (usage_limits, prompts) live in a workspace or an organisation, and
 * each one once: two entries with the same id (given, or derived from scope and name) would fight.
 */
function declaredOnce<E extends { workspace_id?: string | undefined; organisation_id?: string | undefined }>(
  source: string,
  field: string,
  what: string,
  entries: readonly E[] | undefined,
  idOf: (e: E) => string,
): void {
  const ids = new Map<string, number>();
  for (const [i, e] of (entries ?? []).entries()) {
    if (e.workspace_id === undefined && e.organisation_id === undefined) {
      throw new BootstrapError(`${source} is invalid:\n  ${field}[${i}].workspace_id: a ${what} names its workspace_id or organisation_id`);
    }
    const id = idOf(e);
    const twin = ids.get(id);
    if (twin !== undefined) {
      throw new BootstrapError(`${source} is invalid:\n  ${field}[${i}]: the same ${what} as ${field}[${twin}] (same id, or same name in the same scope)`);
    }
    ids.set(id, i);
  }
}

/** Parse bootstrap YAML text; throws a BootstrapError naming the bad field. */
export function parseBootstrap(text: string, env: NodeJS.ProcessEnv = process.env, source = 'bootstrap'): Bootstrap {
  let doc: unknown;
  try {
    doc = parseYaml(text) ?? {};
  } catch (e) {
    throw new BootstrapError(`${source}: not valid YAML: ${(e as Error).message}`);
  }
  const r = BootstrapSchema.safeParse(interpolateEnv(doc, env));
  if (!r.success) {
    const lines = toIssues(r.error).map((i) => `  ${formatPath(i.path) || '(root)'}: ${i.message}`);
    throw new BootstrapError(`${source} is invalid:\n${lines.join('\n')}`);
  }
  const names = new Set<string>();
  for (const [i, k] of r.data.api_keys.entries()) {
    if (names.has(k.key)) throw new BootstrapError(`${source} is invalid:\n  api_keys[${i}].key: duplicate key`);
    names.add(k.key);
  }
  declaredOnce(source, 'usage_limits', 'policy', r.data.usage_limits, declaredId);
  declaredOnce(source, 'prompts', 'prompt', r.data.prompts, declaredPromptId);
  return r.data;
}

export function loadBootstrap(file: string, env: NodeJS.ProcessEnv = process.env): Bootstrap {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new BootstrapError(`cannot read bootstrap file ${file}: ${(e as Error).message}`);
  }
  return parseBootstrap(text, env, file);
}
