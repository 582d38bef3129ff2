import { createHash } from 'node:crypto';
import { canonicalJson } from '../cache/canonical.js';
import type { PlanNode, TargetNode } from './types.js';

const digest = (s: string, n = 16): string => createHash('sha256').update(s).digest('hex').slice(0, n);

/** A target's identity: provider, host and a digest of its key (never the key itself). Breakers key on it. */
const targetIds = new WeakMap<TargetNode, string>();
export function targetIdentity(node: TargetNode): string {
  let id = targetIds.get(node);
  if (id === undefined) {
    const t = node.target;
    const where = canonicalJson({ extra: t.extra, org: t.vendor_organization, project: t.vendor_project });
    id = `${t.provider}|${t.custom_host ?? ''}|${t.api_key ? digest(t.api_key) : '-'}|${digest(where, 8)}`;
    targetIds.set(node, id);
  }
  return id;
}

/**
 * A node's provider identity for the cache key: every target below it (identity and the overrides it
 * applies), so two configs reaching the same providers the same way share answers, and any change of
 * provider, key or override does not.
 */
const nodeIds = new WeakMap<PlanNode, string>();
export function nodeIdentity(node: PlanNode): string {
  let id = nodeIds.get(node);
  if (id === undefined) {
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
    id = digest(parts.sort().join('\n'), 32);
    nodeIds.set(node, id);
  }
  return id;
}

/** Does a conditional at or below this node route on metadata? Then metadata stays in the cache key. */
const metadataRouted = new WeakMap<PlanNode, boolean>();
export function routesOnMetadata(node: PlanNode): boolean {
  let r = metadataRouted.get(node);
  if (r === undefined) {
    r = node.kind !== 'target' && ((node.kind === 'conditional' && JSON.stringify(node.conditions ?? []).includes('"metadata.')) || node.children.some(routesOnMetadata));
    metadataRouted.set(node, r);
  }
  return r;
}
