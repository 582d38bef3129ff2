import { z } from 'zod';
import { parseOrThrow } from '../config/issues.js';
import { ResourceService, SCOPE_FIELDS } from './resources.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { GuardrailLookup } from '../plan/build-plan.js';
import type { GuardrailChange, GuardrailCheck, GuardrailStore } from '../state/guardrail-store.js';

/**
 * Validates a guardrail's checks as configs do (the check library's validator, handed in by the
 * composition root): throws a 400 GatewayError naming the path (e.g. `checks[1].id`) for an unknown
 * check id or bad parameters.
 */
export type ValidateChecks = (checks: readonly GuardrailCheck[], path: string) => void;

/**
 * A ValidateChecks from the check library's `resolveCheck(id, parameters, path)`: each check's
 * parameters are validated at `checks[i].parameters` (the library names the path in its 400).
 */
export function checksValidator(resolve: (id: string, parameters: unknown, path: readonly (string | number)[]) => unknown): ValidateChecks {
  return (checks, path) => checks.forEach((c, i) => resolve(c.id, c.parameters, [path, i, 'parameters']));
}

/** Used until the composition root is given the check library: no check id is known, so nothing passes. */
export const noChecksKnown: ValidateChecks = (checks, path) => {
  const where = `${path}[0].id`;
  throw new GatewayError('invalid_config', `${where}: unknown check id "${checks[0]?.id}": this build has no check library.`, {
    param: where,
    issues: [{ path: [path, 0, 'id'], message: 'unknown check id' }],
  });
};

const CheckSchema = z.strictObject({
  id: z.string().min(1, 'a check id must not be empty'),
  parameters: z.record(z.string(), z.unknown()).default({}),
});

const ActionsSchema = z.strictObject({
  onFail: z.enum(['block', 'log']).optional(),
  message: z.string().max(2000, 'at most 2000 characters').optional(),
});

/** The body of POST and PUT /v1/guardrails (docs/guardrails.md, "Guardrails API"). */
export const GuardrailBodySchema = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(256, 'at most 256 characters'),
  checks: z.array(CheckSchema).min(1, 'at least one check'),
  actions: ActionsSchema,
  ...SCOPE_FIELDS,
});
export type GuardrailBody = z.infer<typeof GuardrailBodySchema>;

/**
 * The guardrails API's logic (resources.ts): a body is validated with zod, then its checks through
 * the check library (an unknown check id or bad parameters is a 400 naming the path).
 */
export class GuardrailsService extends ResourceService<GuardrailChange> {
  constructor(store: GuardrailStore, validateChecks: ValidateChecks) {
    super(store, {
      label: 'guardrail',
      notFound: 'guardrail_not_found',
      parse(body) {
        const { name, checks, actions, ...scope } = parseOrThrow(GuardrailBodySchema, body, 'invalid_request_body', 'request body');
        validateChecks(checks, 'checks');
        return { content: { name, checks, actions }, scope };
      },
    });
  }
}

/**
 * The plan builder's view of the store: a stored guardrail's checks and whether it denies, looked up
 * in the requesting key's scope (the resolver passes it; no scope sees every workspace's).
 */
export function guardrailLookup(store: Pick<GuardrailStore, 'lookup'>): GuardrailLookup {
  return (idOrSlug, versionId, scope) => {
    const r = store.lookup(idOrSlug, versionId, scope);
    if (!r) return undefined;
    const out: NonNullable<ReturnType<GuardrailLookup>> = { checks: r.checks };
    if (r.actions.onFail !== undefined) out.denyOnFail = r.actions.onFail === 'block';
    if (r.actions.message !== undefined) out.message = r.actions.message;
    return out;
  };
}
