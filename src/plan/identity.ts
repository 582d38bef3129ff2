import { canonicalJson, sha256 } from '../util/canonical.js';
import { memoByObject } from '../util/memo.js';
import type { PlanNode, TargetNode } from './types.js';

const digest = (s: string, n = 16): string => sha256(s).slice(0, n);

/** A target's identity: provider, host and a digest of its key (never the key itself). Breakers key on it. */
export const targetIdentity = memoByObject((node: TargetNode): string => {
  const t = node.target;
  const where = canonicalJson({ extra: t.extra, org: t.vendor_organization, project: t.vendor_project });
  return `${t.provider}|${t.custom_host ?? ''}|${t.api_key ? digest(t.api_key) : '-'}|${digest(where, 8)}`;
});

/**
 * A node's provider identity for the cache key: every target below it (identity and the overrides it
 * applies), so two configs reaching the same providers the same way share answers, and any change of
 * provider, key or override does not.
 */
export const nodeIdentity = memoByObject((node: PlanNode): string => {
  const parts: string[] = [];
  const walk = (n: PlanNode): void => {
    if (n.kind === 'target') parts.push(`${targetIdentity(n)}#${canonicalJson(n.settings.override_params ?? {})}`);
    else {
      // How a strategy chooses matters too: a conditional sends different requests to different targets.
      if (n.kind === 'conditional') parts.push(`cond:${canonicalJson({ c: n.conditions, d: n.default, t: n.children.map((c) => c.name) })}`);
      n.children.forEach(walk);
    }
  };
  walk(node);
  return digest(parts.sort().join('\n'), 32);
});

/** Does a conditional at or below this node route on metadata? Then metadata stays in the cache key. */
export const routesOnMetadata: (node: PlanNode) => boolean = memoByObject(
  (node: PlanNode): boolean =>
    node.kind !== 'target' && ((node.kind === 'conditional' && JSON.stringify(node.conditions ?? []).includes('"metadata.')) || node.children.some(routesOnMetadata)),
);
