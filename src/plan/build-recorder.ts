import type { VirtualKey } from '../config/bootstrap.js';
import type { Versioned, VersionedLookup } from '../state/versioned-store.js';
import { virtualKeyCandidates } from '../state/virtual-key-store.js';
import { memoByObject } from '../util/memo.js';
import type { GuardrailLookup, KeyScope, PlanDeps } from './build-plan.js';

/**
 * What of a caller a scoped plan depends on, made once per caller object (a request's caller is its
 * gateway key's record, the same object on every request with that key; a key's scope never changes).
 */
const callerKey = memoByObject((c: KeyScope & { scopes?: readonly string[] }): string =>
  c.workspace_id === undefined && c.organisation_id === undefined
    ? `\u0000\u0000${c.scopes?.includes('admin') === true ? 'admin' : ''}` // tenancy.ts `usableBy`: an unbound admin key uses more
    : `${JSON.stringify(c.workspace_id ?? null)}\u0000${JSON.stringify(c.organisation_id ?? null)}`,
);
export const callerOf = (c: KeyScope | undefined): string => (c === undefined ? '\u0000' : callerKey(c));

/**
 * What a plan was built from, noted while it is built, so the plan cache can tell when it is stale
 * and whom it may serve.
 *
 * The builder reads virtual keys through `virtualKeys`, a view that looks an id up in the caller's
 * scope (its workspace's key, its organisation's, then the bootstrap file's: another scope's is never
 * tried, so it is as absent as an unknown one, a 404, or `@id` taken as a provider name) and notes
 * every ref it tried and the version it found there (0: absent), so the plan is rebuilt when any of
 * them is written. Which refs are tried depends on the caller, so the plan is built for this caller (a
 * key bound to no scope too: a plan it built must not serve a scoped caller, whose own workspace may
 * have a key with that id).
 *
 * And stored guardrails through `guardrails`, which notes that the plan used any (their store's
 * version then) and looks them up in the caller's scope: a workspace's key resolves only what it may
 * see, so the plan is built for this caller.
 */
export class BuildRecorder {
  readonly keyIds: string[] = [];
  readonly keyVersions: number[] = [];
  guardrailsSeen: number | undefined;
  /** Set (to `callerOf(caller)`) once the plan depends on who asks. */
  builtFor: string | undefined;
  readonly virtualKeys: VersionedLookup<VirtualKey>;
  readonly guardrails: GuardrailLookup | undefined;

  constructor(deps: PlanDeps, caller: KeyScope | undefined) {
    const store = deps.virtualKeys;
    const scoped = (): void => {
      this.builtFor = callerOf(caller);
    };
    const tried = (ref: string, version: number): void => {
      this.keyIds.push(ref);
      this.keyVersions.push(version);
    };
    this.virtualKeys = {
      get version() {
        return store.version;
      },
      get(id: string): Versioned<VirtualKey> | undefined {
        const refs = virtualKeyCandidates(id, caller);
        scoped();
        for (const ref of refs) {
          const e = store.get(ref);
          tried(ref, e?.version ?? 0);
          if (e) return e;
        }
        return undefined;
      },
    };
    const lookup = deps.guardrails;
    this.guardrails = lookup
      ? (idOrSlug, versionId) => {
          this.guardrailsSeen ??= deps.guardrailsVersion?.() ?? 0;
          scoped();
          return lookup(idOrSlug, versionId, caller);
        }
      : undefined;
  }
}
