/**
 * The config object (docs/configuration.md) and the objects it holds, as one strict,
 * recursive zod schema. Unknown keys are rejected at every level, every issue keeps its full path
 * (e.g. ['targets', 1, 'retry', 'attempts']), and the 18 required-key sets are checked on the root.
 * Targets are checked against the key sets later, after inheritance (src/plan), not here.
 */
import { z } from 'zod';
import { parseOrThrow } from './issues.js';
import { PROVIDER_FIELDS_SHAPE, providerKeySets } from './provider-fields.js';
import { isPlainObject, JsonObject, LooseStatusCode, StatusCodes } from './schema-parts.js';
import {
  AfterRequestHookSchema,
  BeforeRequestHookSchema,
  InputGuardrailEntrySchema,
  OutputGuardrailEntrySchema,
} from './hook-schemas.js';

// ---------------------------------------------------------------------------------------------
// Strategy, cache, retry, circuit breaker

export const STRATEGY_MODES = ['single', 'loadbalance', 'fallback', 'conditional', 'race'] as const;
export type StrategyMode = (typeof STRATEGY_MODES)[number];

/** Modes that route among `targets` and so need at least one. */
const MULTI_TARGET_MODES: readonly string[] = ['loadbalance', 'fallback', 'conditional', 'race'];

export const LOADBALANCE_ALGORITHMS = ['weighted', 'least_latency'] as const;
export type LoadbalanceAlgorithm = (typeof LOADBALANCE_ALGORITHMS)[number];

/** Strategy fields that only one mode reads: beside any other mode they are a 400 naming them. */
const ONLY_WITH_MODE: readonly (readonly [string, StrategyMode])[] = [
  ['on_status_codes', 'fallback'],
  ['hedge_after_ms', 'race'],
  ['algorithm', 'loadbalance'],
];

export const ConditionSchema = z.strictObject({
  query: JsonObject,
  then: z.string().min(1, 'then must name a target'),
});

export const StrategySchema = z
  .strictObject({
    mode: z.enum(STRATEGY_MODES),
    conditions: z.array(ConditionSchema).optional(),
    default: z.string().min(1, 'default must name a target').optional(),
    on_status_codes: StatusCodes.optional(),
    /** Gateway addition: delay between the staggered requests of `race`. */
    hedge_after_ms: z.number().int().min(0).optional(),
    /** Gateway addition: how `loadbalance` picks (docs/routing.md); weighted random by default. */
    algorithm: z.enum(LOADBALANCE_ALGORITHMS).optional(),
  })
  .superRefine(
    (s, ctx) => {
      const mode = (s as { mode?: unknown }).mode;
      if (typeof mode !== 'string' || !(STRATEGY_MODES as readonly string[]).includes(mode)) return;
      const has = (k: string) => (s as Record<string, unknown>)[k] !== undefined;
      if (mode === 'conditional') {
        const conditions = (s as Record<string, unknown>).conditions;
        if (conditions === undefined || (Array.isArray(conditions) && conditions.length === 0)) {
          ctx.addIssue({
            code: 'custom',
            path: ['conditions'],
            message: 'mode "conditional" requires a non-empty conditions array',
            input: conditions,
          });
        }
        if (!has('default')) {
          ctx.addIssue({
            code: 'custom',
            path: ['default'],
            message: 'mode "conditional" requires default (the name of the target used when no condition matches)',
            input: undefined,
          });
        }
      } else {
        for (const k of ['conditions', 'default'] as const) {
          if (has(k)) {
            ctx.addIssue({
              code: 'custom',
              path: [k],
              message: `${k} is only allowed when mode is "conditional" (mode is "${mode}")`,
              input: (s as Record<string, unknown>)[k],
            });
          }
        }
      }
      for (const [k, only] of ONLY_WITH_MODE) {
        if (mode !== only && has(k)) {
          ctx.addIssue({
            code: 'custom',
            path: [k],
            message: `${k} is only allowed when mode is "${only}" (mode is "${mode}")`,
            input: (s as Record<string, unknown>)[k],
          });
        }
      }
    },
    { when: (p) => isPlainObject(p.value) },
  );

export const CacheSchema = z.strictObject({
  mode: z.enum(['simple', 'semantic']),
  /** Seconds. */
  max_age: z.number().int().positive().optional(),
  /** Added: semantic mode's cosine similarity threshold (default from the gateway, 0.95). */
  similarity_threshold: z.number().gt(0).max(1).optional(),
});

export const RetrySchema = z.strictObject({
  attempts: z.number().int().min(0).max(10),
  on_status_codes: z.array(LooseStatusCode).optional(),
  use_retry_after_headers: z.boolean().optional(),
});

export const CircuitBreakerSchema = z.strictObject({
  failure_threshold: z.number().int().min(1),
  /** Milliseconds. */
  cooldown_interval: z.number().min(30_000),
  failure_status_codes: StatusCodes.optional(),
});

// ---------------------------------------------------------------------------------------------
// Required key sets

/**
 * The required-key sets, in a fixed order (listed in the 400 for a config that has none). A config must contain every key of at least one.
 * The sets of provider fields come from their field groups (provider-fields.ts), `provider` first.
 */
export const REQUIRED_KEY_SETS: readonly (readonly string[])[] = Object.freeze([
  ...providerKeySets('api_key', 'custom_host'),
  ['virtual_key'],
  ['strategy', 'targets'],
  ['cache'],
  ['retry'],
  ['prompt_id'],
  ['forward_headers'],
  ['request_timeout'],
  ...providerKeySets('cloud_b', 'cloud_c', 'cloud_a'),
  ['after_request_hooks'],
  ['before_request_hooks'],
  ['input_guardrails'],
  ['output_guardrails'],
].map((set) => Object.freeze(set)));

/** True when every key of at least one required-key set is present (and not undefined). */
export function satisfiesRequiredKeySet(obj: Record<string, unknown>): boolean {
  // `@slug` names an entry of the model catalog (a stored credential), so it stands alone like
  // `virtual_key` does: it is the recommended form.
  if (typeof obj.provider === 'string' && obj.provider.startsWith('@')) return true;
  return REQUIRED_KEY_SETS.some((set) => set.every((k) => obj[k] !== undefined));
}

export const REQUIRED_KEY_SETS_MESSAGE =
  'config must contain at least one of these key sets: ' +
  REQUIRED_KEY_SETS.map((set) => set.join(' + ')).join('; ');

// ---------------------------------------------------------------------------------------------
// The config object

const ConfigFields = z.strictObject({
  /** api_key, custom_host, vendor_*, deployment and cloud_* fields: one schema per group. */
  ...PROVIDER_FIELDS_SHAPE,
  name: z.string().optional(),
  strict_vendor_compliance: z.boolean().optional(),
  provider: z.string().min(1, 'provider must not be empty').optional(),
  virtual_key: z.string().optional(),
  prompt_id: z.string().optional(),
  strategy: StrategySchema.optional(),
  weight: z.number().min(0).optional(),
  on_status_codes: StatusCodes.optional(),
  override_params: JsonObject.optional(),
  /** Milliseconds. */
  request_timeout: z.number().int().positive().optional(),
  cache: CacheSchema.optional(),
  retry: RetrySchema.optional(),
  cb_config: CircuitBreakerSchema.optional(),
  forward_headers: z.array(z.string().min(1, 'header names must not be empty')).optional(),
  before_request_hooks: z.array(BeforeRequestHookSchema).optional(),
  after_request_hooks: z.array(AfterRequestHookSchema).optional(),
  input_guardrails: z.array(InputGuardrailEntrySchema).optional(),
  output_guardrails: z.array(OutputGuardrailEntrySchema).optional(),
});

/** The config object: its fields, and `targets`, each a config object itself. */
const ConfigObject = ConfigFields.extend({
  get targets(): z.ZodOptional<z.ZodArray<typeof ConfigObject>> {
    return z.array(ConfigNode).optional();
  },
});

/** One node of the tree (root or target): the object plus the strategy/targets rules. */
const ConfigNode: typeof ConfigObject = ConfigObject.superRefine(
  (c, ctx) => {
    const node = c as Record<string, unknown>;
    const strategy = node.strategy;
    const targets = node.targets;
    const mode = isPlainObject(strategy) ? strategy.mode : undefined;
    if (targets !== undefined && strategy === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['targets'],
        message: 'targets requires a strategy (e.g. {"mode": "fallback"})',
        input: targets,
      });
    }
    if (strategy !== undefined && Array.isArray(targets) && targets.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['targets'],
        message: 'targets must not be empty',
        input: targets,
      });
    } else if (typeof mode === 'string' && MULTI_TARGET_MODES.includes(mode) && targets === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['targets'],
        message: `strategy mode "${mode}" requires a non-empty targets array`,
        input: targets,
      });
    }
  },
  { when: (p) => isPlainObject(p.value) },
);

/** The full config object: strict, recursive, and holding at least one required-key set at the root. */
export const ConfigSchema: typeof ConfigObject = ConfigNode.superRefine(
  (c, ctx) => {
    if (!satisfiesRequiredKeySet(c as Record<string, unknown>)) {
      ctx.addIssue({ code: 'custom', path: [], message: REQUIRED_KEY_SETS_MESSAGE, input: c });
    }
  },
  { when: (p) => isPlainObject(p.value) },
);

export type Config = z.infer<typeof ConfigSchema>;
export type Strategy = z.infer<typeof StrategySchema>;
export type CacheConfig = z.infer<typeof CacheSchema>;
export type RetryConfig = z.infer<typeof RetrySchema>;
export type CircuitBreakerConfig = z.infer<typeof CircuitBreakerSchema>;

/** Parse a config or throw GatewayError invalid_config (400) whose `issues` name every bad path. */
export function parseConfig(input: unknown, prefix: (string | number)[] = ['config']): Config {
  return parseOrThrow(ConfigSchema, input, 'invalid_config', 'config', prefix);
}
