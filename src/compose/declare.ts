import type { Basics } from './basics.js';
import type { Edge } from './edge.js';
import type { State } from './state.js';

/**
 * The bootstrap file's usage_limits and prompts, stored at every start (idempotent; a changed prompt
 * adds a version). When Redis is unreachable: an error, or with --redis-optional a warning and
 * nothing declared in this run.
 */
export async function declareFromBootstrap(b: Basics, edge: Pick<Edge, 'policies' | 'prompts'>, state: State): Promise<void> {
  const { bootstrap, logger } = b;
  const limits = bootstrap?.usage_limits ?? [];
  if (limits.length > 0 && (await declareFromFile(b, 'usage_limits', () => edge.policies.declare(limits))) !== undefined) {
    logger.info({ msg: 'usage-limit policies declared', declared: limits.length, counters: state.stores.usage.kind });
  }
  const prompts = bootstrap?.prompts ?? [];
  const declared = prompts.length === 0 ? undefined : await declareFromFile(b, 'prompts', () => edge.prompts.declare(prompts));
  if (!declared) return;
  logger.info({
    msg: 'bootstrap prompts declared',
    prompts: declared.map(({ record: r, outcome }) => ({ id: r.id, slug: r.slug, version_id: r.version_id, workspace_id: r.workspace_id, organisation_id: r.organisation_id, outcome })),
  });
}

async function declareFromFile<T>(b: Basics, what: string, declare: () => Promise<T>): Promise<T | undefined> {
  try {
    return await declare();
  } catch (e) {
    if (!b.options['redis-optional']) throw new Error(`bootstrap ${what} could not be stored: ${(e as Error).message}`);
    b.logger.warn({ msg: `bootstrap ${what} could not be stored (Redis unreachable); they are not declared in this run`, error: (e as Error).message });
    return undefined;
  }
}
