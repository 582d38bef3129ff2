import { randomUUID } from 'node:crypto';
import {
  changed,
  isPolicyId,
  newPolicy,
  pageOf,
  policyMatches,
  policyVisible,
  redeclared,
  type DeclaredPolicy,
  type PolicyDefinition,
  type PolicyDraft,
  type PolicyListQuery,
  type PolicyPage,
  type PolicyScope,
  type PolicyStore,
  type PolicyStoreOptions,
  type UsageLimitPolicy,
} from '../policy-store.js';

/** The embedded default: policies in this process only (a Map keeps creation order). Answers copies. */
export class MemoryPolicyStore implements PolicyStore {
  readonly kind = 'memory' as const;
  private readonly byId = new Map<string, UsageLimitPolicy>();
  private readonly now: () => number;
  private gen = 0;
  private activeList: UsageLimitPolicy[] | undefined;

  constructor(opts: PolicyStoreOptions = {}) {
    this.now = opts.now ?? Date.now;
  }

  async create(draft: PolicyDraft): Promise<UsageLimitPolicy> {
    const p = newPolicy(randomUUID(), draft, this.at());
    this.put(p);
    return structuredClone(p);
  }

  async get(id: string, scope: PolicyScope): Promise<UsageLimitPolicy | undefined> {
    const p = this.find(id, scope);
    return p && structuredClone(p);
  }

  async list(scope: PolicyScope, query: PolicyListQuery): Promise<PolicyPage> {
    const matching: UsageLimitPolicy[] = [];
    for (const p of this.byId.values()) if (policyVisible(p, scope) && policyMatches(p, query)) matching.push(p);
    return structuredClone(pageOf(matching, query));
  }

  async update(id: string, scope: PolicyScope, change: PolicyDefinition): Promise<UsageLimitPolicy | undefined> {
    const p = this.find(id, scope);
    if (!p) return undefined;
    const next = changed(p, change, this.at());
    this.put(next);
    return structuredClone(next);
  }

  async archive(id: string, scope: PolicyScope): Promise<UsageLimitPolicy | undefined> {
    const p = this.find(id, scope);
    if (!p) return undefined;
    if (p.status === 'archived') return structuredClone(p);
    return this.update(id, scope, { ...p, status: 'archived' });
  }

  async declare(d: DeclaredPolicy): Promise<UsageLimitPolicy> {
    const id = d.id.toLowerCase();
    const current = this.byId.get(id);
    if (!current) {
      const p = newPolicy(id, d, this.at());
      this.put(p);
      return structuredClone(p);
    }
    const next = redeclared(current, d, this.at());
    if (next) this.put(next);
    return structuredClone(next ?? current);
  }

  active(): readonly UsageLimitPolicy[] {
    return (this.activeList ??= [...this.byId.values()].filter((p) => p.status === 'active'));
  }

  generation(): number {
    return this.gen;
  }

  private put(p: UsageLimitPolicy): void {
    this.byId.set(p.id, p);
    this.gen++;
    this.activeList = undefined;
  }

  private find(id: string, scope: PolicyScope): UsageLimitPolicy | undefined {
    if (!isPolicyId(id)) return undefined;
    const p = this.byId.get(id.toLowerCase());
    return p && policyVisible(p, scope) ? p : undefined;
  }

  private at(): string {
    return new Date(this.now()).toISOString();
  }
}
