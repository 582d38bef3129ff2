import { normalModelId } from '../pricing/model-id.js';
import { tenantKey } from '../security/tenancy.js';
import type { PolicyStore, UsageLimitPolicy } from '../state/policy-store.js';
import { toUnits } from '../state/usage-counters.js';
import { memoByObject } from '../util/memo.js';
import type { Compiled, KeyScope } from './types.js';

/** A key's pair as the index's key, made once per key record (the same object on every request with that key). */
const tenantOf = memoByObject((key: KeyScope): string => tenantKey(key));

function compile(p: UsageLimitPolicy): Compiled {
  const c: Compiled = {
    policy: p,
    metadata: [],
    groupBy: p.group_by.map((g) => g.key),
    limit: toUnits(p.type, p.credit_limit),
    alertAt: p.alert_threshold === null ? null : toUnits(p.type, p.alert_threshold),
  };
  for (const { key, value } of p.conditions) {
    if (key === 'api_key') c.keyName = value;
    else if (key === 'workspace_id') c.workspace = value;
    else if (key === 'provider') c.provider = value;
    else if (key === 'model') c.model = normalModelId(value);
    else c.metadata.push([key.slice('metadata.'.length), value]);
  }
  return c;
}

interface Index {
  generation: number;
  /** By the (organisation, workspace) pair's `tenantKey`: a workspace id means nothing without its organisation. */
  byWorkspace: Map<string, Compiled[]>;
  byOrganisation: Map<string, Compiled[]>;
}

/**
 * The active policies, compiled and indexed by the scope of the keys they apply to: a policy of
 * workspace W applies to keys of workspace W, an organisation-wide policy (no workspace) to keys of
 * its organisation; keys without a scope are not limited. Rebuilt when the store's generation
 * moved; a key outside every indexed scope costs two Map lookups.
 */
export class PolicyIndex {
  private index: Index = { generation: -1, byWorkspace: new Map(), byOrganisation: new Map() };

  constructor(private readonly policies: Pick<PolicyStore, 'active' | 'generation'>) {}

  /** True while no policy is active at all. */
  empty(): boolean {
    const idx = this.current();
    return idx.byWorkspace.size === 0 && idx.byOrganisation.size === 0;
  }

  /** The policies whose scope covers `key`: its workspace's, then its organisation's (either may be absent). */
  scopesOf(key: KeyScope): [Compiled[] | undefined, Compiled[] | undefined] {
    const idx = this.current();
    const ws = key.workspace_id !== undefined && idx.byWorkspace.size > 0 ? idx.byWorkspace.get(tenantOf(key)) : undefined;
    const org = key.organisation_id !== undefined ? idx.byOrganisation.get(key.organisation_id) : undefined;
    return [ws, org];
  }

  private current(): Index {
    const gen = this.policies.generation();
    if (gen === this.index.generation) return this.index;
    const next: Index = { generation: gen, byWorkspace: new Map(), byOrganisation: new Map() };
    for (const p of this.policies.active()) {
      const [map, scope] =
        p.workspace_id !== null
          ? [next.byWorkspace, tenantKey({ workspace_id: p.workspace_id, organisation_id: p.organisation_id ?? undefined })]
          : [next.byOrganisation, p.organisation_id];
      if (scope === null) continue;
      let list = map.get(scope);
      if (!list) map.set(scope, (list = []));
      list.push(compile(p));
    }
    this.index = next;
    return next;
  }
}
