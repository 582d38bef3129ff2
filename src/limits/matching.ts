/**
 * A request against one policy. Within its scope (policy-index.ts), every condition must match:
 * `api_key` (the key's name), `workspace_id`, `metadata.<key>` (the text of that metadata value),
 * and `provider` / `model`, which must hold together for at least one target the plan may call (the
 * first such target, in config order, names the group when group_by uses them). Models are compared
 * and grouped by their normalised id (`normalModelId`: without case, region prefix or snapshot date).
 */
import { normalModelId } from '../pricing/model-id.js';
import type { PlanNode } from '../plan/types.js';
import type { Candidate, Compiled, KeyScope, LimitedRequest } from './types.js';

/** Any value as text, `""` for none. */
export const text = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

/** The targets a plan may call, in config order (once per plan: plans are cached). */
const candidatesByPlan = new WeakMap<PlanNode, Candidate[]>();
export function candidatesOf(plan: PlanNode): Candidate[] {
  let list = candidatesByPlan.get(plan);
  if (!list) {
    list = [];
    const walk = (n: PlanNode): void => {
      if (n.kind !== 'target') return n.children.forEach(walk);
      const c: Candidate = { path: n.path, provider: n.target.provider };
      const o = n.settings.override_params;
      if (o) {
        c.override = o;
        if (typeof o.model === 'string') c.model = o.model;
      }
      list!.push(c);
    };
    walk(plan);
    candidatesByPlan.set(plan, list);
  }
  return list;
}

/** The plan's target at `path` (where an attempt answered), if the request has a plan. */
export function candidateAt(req: LimitedRequest, path: string): Candidate | undefined {
  if (!req.plan) return undefined;
  for (const c of candidatesOf(req.plan)) if (c.path === path) return c;
  return undefined;
}

/** The model a target is asked for: its override's, else the body's. */
export const modelOf = (c: Candidate, req: LimitedRequest): string | undefined => {
  if (c.model !== undefined) return c.model;
  const m = req.request.body?.model;
  return typeof m === 'string' ? m : undefined;
};

/** The model a target is asked for, normalised as the price table does, so case and snapshot dates match one policy. */
const normalModelOf = (c: Candidate, req: LimitedRequest): string | undefined => {
  const m = modelOf(c, req);
  return m === undefined ? undefined : normalModelId(m);
};

/** The policy's `provider` and `model` conditions hold for this target. */
export const fitsTarget = (p: Compiled, c: Candidate, req: LimitedRequest): boolean =>
  (p.provider === undefined || p.provider === c.provider) && (p.model === undefined || p.model === normalModelOf(c, req));

/** The policy's conditions on the key and the metadata hold. */
export function staticMatch(p: Compiled, req: LimitedRequest, key: KeyScope): boolean {
  if (p.keyName !== undefined && p.keyName !== key.name) return false;
  if (p.workspace !== undefined && p.workspace !== key.workspace_id) return false;
  for (const [k, v] of p.metadata) {
    const m = req.metadata;
    if (!m || !Object.hasOwn(m, k) || String(m[k]) !== v) return false;
  }
  return true;
}

/** The group value of a request under a policy: one attribute's value, or a JSON array of several; `""` without group_by. */
export function groupOf(p: Compiled, req: LimitedRequest, key: KeyScope, c: Candidate): string {
  if (p.groupBy.length === 0) return '';
  const value = (k: string): string => {
    switch (k) {
      case 'api_key':
        return key.name;
      case 'workspace_id':
        return key.workspace_id ?? '';
      case 'provider':
        return c.provider;
      case 'model':
        return normalModelOf(c, req) ?? '';
      default: {
        const m = req.metadata;
        const name = k.slice('metadata.'.length);
        return m && Object.hasOwn(m, name) ? text(m[name]) : '';
      }
    }
  };
  return p.groupBy.length === 1 ? value(p.groupBy[0]!) : JSON.stringify(p.groupBy.map(value));
}
