import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { CheckHttp } from '../checks/http.js';
import type { Price } from '../config/prices.js';
import { costOf, roundCost } from '../pricing/cost.js';
import { normalModelId } from '../pricing/model-id.js';
import type { PriceTable } from '../pricing/prices.js';
import { estimateTokens, type TokenEstimate } from '../pricing/usage-estimate.js';
import type { Endpoint, Usage } from '../config/wire.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Telemetry } from '../metrics/telemetry.js';
import type { PlanNode } from '../plan/types.js';
import type { PolicyStore, UsageLimitPolicy } from '../state/policy-store.js';
import {
  fromUnits,
  toUnits,
  type Reservation,
  type ReserveItem,
  type SettleItem,
  type UsageAlert,
  type UsageCounters,
} from '../state/usage-counters.js';
import type { AnswerMeta } from '../upstream/events.js';
import { tenantKey } from '../security/tenancy.js';
import { memoByObject } from '../util/memo.js';
import type { Ledger, Spent } from './accounting.js';

/** The gateway key as the stage sees it: its name and scope. */
export interface KeyScope {
  readonly name: string;
  readonly workspace_id?: string;
  readonly organisation_id?: string;
}

/** What the stage and the ledger read from a request (the pipeline's RequestContext is one). */
export interface LimitedRequest {
  readonly traceId: string;
  readonly request: { readonly endpoint: Endpoint; readonly body: Record<string, unknown> | undefined };
  readonly plan?: PlanNode;
  readonly metadata?: Record<string, unknown>;
  readonly key?: KeyScope;
  /** Every upstream attempt that answered, with its usage (the measure operator fills it). */
  spent?: Spent[];
  usage?: Usage;
  cost?: number;
  /** Set by the stage when the request holds reservations; settled by the ledger. */
  limits?: LimitHold;
}

/** A target the plan may call: where it is in the config, its provider, its `override_params`. */
interface Candidate {
  path: string;
  provider: string;
  override?: Record<string, unknown>;
  /** override_params.model, when a string. */
  model?: string;
}

/** A policy compiled for matching: its conditions split by attribute, its limits in counter units. */
interface Compiled {
  policy: UsageLimitPolicy;
  keyName?: string;
  workspace?: string;
  metadata: (readonly [string, string])[];
  provider?: string;
  /** The condition's model, normalised (`normalModelId`): compared with the target's, normalised. */
  model?: string;
  groupBy: readonly string[];
  limit: number;
  alertAt: number | null;
}

/** The active policies, indexed by the scope of the keys they apply to. */
interface PolicyIndex {
  generation: number;
  /** By the (organisation, workspace) pair's `tenantKey`: a workspace id means nothing without its organisation. */
  byWorkspace: Map<string, Compiled[]>;
  byOrganisation: Map<string, Compiled[]>;
}

/** A key's pair as the index's key, made once per key record (the same object on every request with that key). */
const tenantOf = memoByObject((key: KeyScope): string => tenantKey(key));

/** One matched policy of a request: what it reserved and how it was matched. */
interface Held {
  policy: Compiled;
  /** Units reserved (the estimate). */
  estimate: number;
}

export interface LimitHold {
  reservation: Reservation;
  held: Held[];
  done: boolean;
}

export type StoreErrorMode = 'open' | 'closed';

export interface UsageLimitsLogger {
  warn(obj: Record<string, unknown>): void;
}

export interface UsageLimitsDeps {
  policies: Pick<PolicyStore, 'active' | 'generation'>;
  counters: UsageCounters;
  prices: PriceTable;
  telemetry: Telemetry;
  logger: UsageLimitsLogger;
  /** Epoch ms (the pipeline's clock). */
  now: () => number;
  /** What a request under a policy gets when the counters cannot be reached. */
  onStoreError: StoreErrorMode;
  /** Where alerts are POSTed (through the host-guarded client), if anywhere. */
  webhook?: { url: string; http: CheckHttp; timeoutMs: number };
  /** Warnings of fail-open admissions are logged at most this often (ms). Default 10 s. */
  warnIntervalMs?: number;
  /** A settle that could not reach the counters is tried again this often (ms). Default 1 s. */
  retryIntervalMs?: number;
}

/** Pending settles kept for retry while the counters are unreachable (then the oldest are dropped). */
const RETRY_MAX = 10_000;

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

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

/** The targets a plan may call, in config order (once per plan: plans are cached). */
const candidatesByPlan = new WeakMap<PlanNode, Candidate[]>();
function candidatesOf(plan: PlanNode): Candidate[] {
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

const modelOf = (c: Candidate, req: LimitedRequest): string | undefined => {
  if (c.model !== undefined) return c.model;
  const m = req.request.body?.model;
  return typeof m === 'string' ? m : undefined;
};

/** The model a target is asked for, normalised as the price table does, so case and snapshot dates match one policy. */
const normalModelOf = (c: Candidate, req: LimitedRequest): string | undefined => {
  const m = modelOf(c, req);
  return m === undefined ? undefined : normalModelId(m);
};

const fitsTarget = (p: Compiled, c: Candidate, req: LimitedRequest): boolean =>
  (p.provider === undefined || p.provider === c.provider) && (p.model === undefined || p.model === normalModelOf(c, req));

function staticMatch(p: Compiled, req: LimitedRequest, key: KeyScope): boolean {
  if (p.keyName !== undefined && p.keyName !== key.name) return false;
  if (p.workspace !== undefined && p.workspace !== key.workspace_id) return false;
  for (const [k, v] of p.metadata) {
    const m = req.metadata;
    if (!m || !Object.hasOwn(m, k) || String(m[k]) !== v) return false;
  }
  return true;
}

/** The group value of a request under a policy: one attribute's value, or a JSON array of several; `""` without group_by. */
function groupOf(p: Compiled, req: LimitedRequest, key: KeyScope, c: Candidate): string {
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
        return m && Object.hasOwn(m, name) ? str(m[name]) : '';
      }
    }
  };
  return p.groupBy.length === 1 ? value(p.groupBy[0]!) : JSON.stringify(p.groupBy.map(value));
}

const isCacheHit = (meta: AnswerMeta): boolean => meta.cacheStatus === 'HIT' || meta.cacheStatus === 'SEMANTIC_HIT';

/**
 * Usage limits: the request stage that admits a request against the usage-limit policies it matches
 * (while each has some of its limit left, counting what requests in flight reserved: then it reserves
 * its estimate on each, all or nothing; else 412 naming the policy), and the ledger that
 * prices every answer and settles the reservations with what the provider reported.
 *
 * Matching: a policy of workspace W applies to requests made with a gateway key of workspace W; an
 * organisation-wide policy (no workspace) to keys of its organisation. Keys without a scope are not
 * limited. Within scope, every condition must match: `api_key` (the key's name), `workspace_id`,
 * `metadata.<key>` (the text of that metadata value), and `provider` / `model`, which must hold
 * together for at least one target the plan may call (the first such target, in config order,
 * names the group when group_by uses them). Models are compared and grouped by their normalised id
 * (`normalModelId`, the price table's: without case, region prefix or snapshot date). The active policies are indexed once per store
 * generation; a request outside every indexed scope costs two Map lookups.
 */
export class UsageLimits implements Ledger<LimitedRequest> {
  private index: PolicyIndex = { generation: -1, byWorkspace: new Map(), byOrganisation: new Map() };
  private lastWarn = -Infinity;
  private suppressed = 0;
  private readonly retries: { reservation: Reservation; actual: SettleItem[]; held: Held[]; scope: KeyScope | undefined }[] = [];
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: UsageLimitsDeps) {}

  /**
   * The admission stage (the pipeline's `usageLimit`): passes the context on once admitted. With no
   * active policy at all it is the identity (no Observable is made).
   */
  readonly stage = <C extends LimitedRequest>(source: Observable<C>): Observable<C> => {
    const idx = this.current();
    if (idx.byWorkspace.size === 0 && idx.byOrganisation.size === 0) return source;
    return new Observable<C>((subscriber) => {
      let pending = 0;
      let sourceDone = false;
      const sub = source.subscribe({
        next: (ctx) => {
          let admission: Promise<void> | undefined;
          try {
            admission = this.admit(ctx);
          } catch (e) {
            subscriber.error(e);
            return;
          }
          if (!admission) {
            subscriber.next(ctx);
            return;
          }
          pending++;
          admission.then(
            () => {
              pending--;
              if (subscriber.closed) {
                // the client left while the reservation was being made: nothing was used
                void this.settleHold(ctx);
                return;
              }
              subscriber.next(ctx);
              if (sourceDone && pending === 0) subscriber.complete();
            },
            (e: unknown) => {
              pending--;
              subscriber.error(e);
            },
          );
        },
        error: (e: unknown) => subscriber.error(e),
        complete: () => {
          sourceDone = true;
          if (pending === 0) subscriber.complete();
        },
      });
      return () => sub.unsubscribe();
    });
  };

  /** The stage as a MonoTypeOperatorFunction of one context type. */
  operator<C extends LimitedRequest>(): MonoTypeOperatorFunction<C> {
    return (source) => this.stage(source);
  }

  /** Stops the settle retries (shutdown). */
  stop(): void {
    if (this.retryTimer) clearInterval(this.retryTimer);
    this.retryTimer = undefined;
  }

  /**
   * The request's cost in USD so far: the usage of every upstream attempt that answered, priced at
   * its target's provider and model; 0 when none answered (a cache hit, a failure); undefined when a
   * model has no price. Rounded as reported (`roundCost`); limits and metrics count each attempt's
   * cost unrounded.
   */
  cost(req: LimitedRequest): number | undefined {
    const spent = req.spent;
    if (!spent) return 0;
    let total = 0;
    for (const s of spent) {
      if (!s.usage) continue;
      const c = this.spentCost(req, s);
      if (c === null) return undefined;
      total += c;
    }
    return roundCost(total);
  }

  /** One attempt's cost, priced once (the answer's cost and the end's metrics both read it). */
  private spentCost(req: LimitedRequest, s: Spent): number | null {
    if (s.cost === undefined) {
      const price = this.priceOf(req, s.meta);
      s.cost = price === undefined ? null : costOf(s.usage!, price);
    }
    return s.cost;
  }

  /**
   * The answer is over (completed, failed or cancelled): its cost, metrics, and the reservations
   * settled with what was reported. Answers the settle (resolved once the counters took it, or failed
   * and queued for retry), undefined when the request held nothing.
   */
  end(req: LimitedRequest): Promise<void> | undefined {
    // a JSON answer's cost was set when it passed (nothing is spent after it); a stream's is set here
    if (req.cost === undefined) req.cost = this.cost(req);
    const spent = req.spent;
    if (spent) {
      const workspace = req.key?.workspace_id ?? '';
      for (const s of spent) {
        if (!s.usage) continue;
        this.deps.telemetry.usage(workspace, s.meta.provider, s.usage, this.spentCost(req, s) ?? undefined);
      }
    }
    return this.settleHold(req);
  }

  private priceOf(req: LimitedRequest, meta: AnswerMeta): Price | undefined {
    const c = this.candidate(req, meta.target);
    return this.deps.prices.lookup(meta.provider, c ? modelOf(c, req) : str(req.request.body?.model) || undefined);
  }

  private candidate(req: LimitedRequest, path: string): Candidate | undefined {
    if (!req.plan) return undefined;
    for (const c of candidatesOf(req.plan)) if (c.path === path) return c;
    return undefined;
  }

  /** The active policies' index, rebuilt when the store's generation moved. */
  private current(): PolicyIndex {
    const gen = this.deps.policies.generation();
    if (gen === this.index.generation) return this.index;
    const next: PolicyIndex = { generation: gen, byWorkspace: new Map(), byOrganisation: new Map() };
    for (const p of this.deps.policies.active()) {
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

  /**
   * Match, estimate and reserve: undefined when no policy applies (nothing to wait for), else the
   * admission (resolves once reserved; rejects with 412, or 503 when failing closed). Throws 412
   * `price_unknown` at once when a cost policy applies to a target whose model has no price.
   */
  private admit(req: LimitedRequest): Promise<void> | undefined {
    const key = req.key;
    const plan = req.plan;
    if (!key || !plan || req.request.endpoint === 'models') return undefined;
    const idx = this.current();
    const ws = key.workspace_id !== undefined && idx.byWorkspace.size > 0 ? idx.byWorkspace.get(tenantOf(key)) : undefined;
    const org = key.organisation_id !== undefined ? idx.byOrganisation.get(key.organisation_id) : undefined;
    if (!ws && !org) return undefined;
    const candidates = candidatesOf(plan);
    const items: ReserveItem[] = [];
    const held: Held[] = [];
    const estimates = new Map<Candidate, TokenEstimate>();
    const estimate = (c: Candidate): TokenEstimate => {
      let e = estimates.get(c);
      if (!e) estimates.set(c, (e = estimateTokens(req.request.endpoint, req.request.body, c.override)));
      return e;
    };
    for (const list of [ws, org]) {
      if (!list) continue;
      for (const p of list) {
        if (!staticMatch(p, req, key)) continue;
        let first: Candidate | undefined;
        let units = 0;
        for (const c of candidates) {
          if (!fitsTarget(p, c, req)) continue;
          first ??= c;
          const e = estimate(c);
          if (p.policy.type === 'tokens') units = Math.max(units, e.input + e.output);
          else {
            const model = modelOf(c, req);
            const price = this.deps.prices.lookup(c.provider, model);
            if (!price) throw priceUnknown(p.policy, c.provider, model);
            units = Math.max(units, Math.ceil(costOf({ prompt_tokens: e.input, completion_tokens: e.output, total_tokens: e.input + e.output }, price) * 1e9));
          }
        }
        if (!first) continue;
        const pol = p.policy;
        items.push({ policyId: pol.id, type: pol.type, reset: pol.periodic_reset, group: groupOf(p, req, key, first), estimate: units, limit: p.limit, alertAt: p.alertAt });
        held.push({ policy: p, estimate: units });
      }
    }
    if (items.length === 0) return undefined;
    const now = this.deps.now();
    return this.deps.counters.reserve(items, now).then(
      (out) => {
        if (out.ok) {
          req.limits = { reservation: out.reservation, held, done: false };
          return;
        }
        const p = held[out.refused]!.policy.policy;
        this.deps.telemetry.limitRejected(p.id);
        throw refusal(p, items[out.refused]!, out.used, out.reserved, out.periodEnd);
      },
      (e: unknown) => {
        if (this.deps.onStoreError === 'closed') {
          this.deps.telemetry.limitStoreError('refused');
          throw new GatewayError('usage_limits_unavailable', undefined, { cause: e });
        }
        this.deps.telemetry.limitStoreError('admitted');
        this.warnOpen(now, e, held);
      },
    );
  }

  /** Settle the request's reservations with what its upstream attempts reported (once). */
  private settleHold(req: LimitedRequest): Promise<void> | undefined {
    const hold = req.limits;
    if (!hold || hold.done) return undefined;
    hold.done = true;
    const key = req.key!;
    const actual: SettleItem[] = hold.held.map((h) => this.actualOf(req, key, h));
    return this.settle(hold.reservation, actual, hold.held, key);
  }

  /**
   * What one matched policy counts for the request: the usage of every attempt at a target that
   * fits the policy (tokens, or its cost at that target's price), under the group of the target that
   * answered last; an attempt that answered without reporting usage counts the estimate; a request
   * that reached no target (refused, failed before any answer, answered from the cache) counts 0.
   */
  private actualOf(req: LimitedRequest, key: KeyScope, h: Held): SettleItem {
    const p = h.policy;
    let units = 0;
    let group: string | undefined;
    for (const s of req.spent ?? []) {
      if (isCacheHit(s.meta)) continue;
      const c = this.candidate(req, s.meta.target);
      if (!c || !fitsTarget(p, c, req)) continue;
      group = groupOf(p, req, key, c);
      if (!s.usage) {
        units += h.estimate;
        continue;
      }
      if (p.policy.type === 'tokens') units += s.usage.total_tokens;
      else {
        const price = this.deps.prices.lookup(c.provider, modelOf(c, req));
        units += price ? toUnits('cost', costOf(s.usage, price)) : h.estimate;
      }
    }
    return group === undefined ? { actual: 0 } : { actual: units, group };
  }

  /** Resolves once the counters took the settle, or it failed and waits for a retry (never rejects). */
  private settle(reservation: Reservation, actual: SettleItem[], held: Held[], key: KeyScope | undefined): Promise<void> {
    return this.deps.counters.settle(reservation, actual, this.deps.now()).then(
      (alerts) => this.alert(alerts, held, key),
      () => this.retryLater({ reservation, actual, held, scope: key }),
    );
  }

  /** A settle the counters did not take: tried again until they do (settles are idempotent). */
  private retryLater(r: { reservation: Reservation; actual: SettleItem[]; held: Held[]; scope: KeyScope | undefined }): void {
    if (this.retries.length >= RETRY_MAX) this.retries.shift();
    this.retries.push(r);
    if (this.retryTimer) return;
    this.retryTimer = setInterval(() => {
      const batch = this.retries.splice(0);
      if (batch.length === 0) {
        clearInterval(this.retryTimer);
        this.retryTimer = undefined;
        return;
      }
      for (const x of batch) void this.settle(x.reservation, x.actual, x.held, x.scope);
    }, this.deps.retryIntervalMs ?? 1000);
    this.retryTimer.unref();
  }

  private alert(alerts: UsageAlert[], held: Held[], key: KeyScope | undefined): void {
    for (const a of alerts) {
      const p = held[a.item]!.policy.policy;
      const event = {
        policy_id: p.id,
        policy_name: p.name,
        workspace_id: p.workspace_id,
        organisation_id: p.organisation_id,
        type: p.type,
        group: a.group,
        used: fromUnits(p.type, a.used),
        alert_threshold: p.alert_threshold,
        credit_limit: p.credit_limit,
        period: a.period.key,
        resets_at: Number.isFinite(a.period.end) ? new Date(a.period.end).toISOString() : null,
      };
      this.deps.telemetry.limitAlert(p.id);
      this.deps.logger.warn({ msg: 'usage limit alert', ...event, key_name: key?.name });
      const hook = this.deps.webhook;
      if (hook) {
        hook.http
          .request(hook.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ event: 'usage_limit.alert', ...event }),
            timeoutMs: hook.timeoutMs,
          })
          .then(
            (res) => {
              if (res.status >= 300) this.deps.logger.warn({ msg: 'usage limit alert webhook answered an error', policy_id: p.id, status: res.status });
            },
            (e: unknown) => this.deps.logger.warn({ msg: 'usage limit alert webhook failed', policy_id: p.id, error: (e as Error).message }),
          );
      }
    }
  }

  /** Fail open: logged at most once per interval, with the number admitted unchecked since. */
  private warnOpen(now: number, e: unknown, held: Held[]): void {
    if (now - this.lastWarn < (this.deps.warnIntervalMs ?? 10_000)) {
      this.suppressed++;
      return;
    }
    this.deps.logger.warn({
      msg: 'usage counters unreachable: request admitted without a usage-limit check (--usage-limits-on-store-error open)',
      policies: held.map((h) => h.policy.policy.id),
      error: (e as Error).message,
      suppressed: this.suppressed,
    });
    this.suppressed = 0;
    this.lastWarn = now;
  }
}

const PER = { daily: 'a day', weekly: 'a week', monthly: 'a month' } as const;

/**
 * The 412 of a policy with nothing left for this request's group, saying which of the two refused
 * it, with the numbers (never any request text): its usage reached the limit (it stays refused until
 * the period resets), or requests in flight hold the rest (it may be admitted once they settle).
 */
function refusal(p: UsageLimitPolicy, item: ReserveItem, usedUnits: number, reservedUnits: number, periodEnd: number): GatewayError {
  const resetsAt = Number.isFinite(periodEnd) ? new Date(periodEnd).toISOString() : null;
  const unit = p.type === 'cost' ? 'USD' : 'tokens';
  const group = item.group;
  const used = fromUnits(p.type, usedUnits);
  const reserved = fromUnits(p.type, reservedUnits);
  const reached = usedUnits >= item.limit;
  const head = `Usage limit "${p.name}" (policy ${p.id})${group === '' ? '' : ` for ${JSON.stringify(group)}`}`;
  const per = p.periodic_reset ? PER[p.periodic_reset] : 'in all';
  const message = reached
    ? `${head} is reached: used ${used} of ${p.credit_limit} ${unit} ${per}${resetsAt ? `, refused until ${resetsAt}` : ''} (in-flight reservations ${reserved}).`
    : `${head} has no room left: in-flight reservations fill the rest (used ${used} + reserved ${reserved} of ${p.credit_limit} ${unit} ${per}); requests are admitted again as those in flight end.`;
  return new GatewayError('usage_limit_exceeded', message, {
    // A group whose room is held by requests in flight gets it back as they end: worth a client's retry.
    ...(reached ? {} : { headers: { 'x-should-retry': 'true' } }),
    extra: {
      usage_limit: {
        policy_id: p.id,
        policy_name: p.name,
        type: p.type,
        group,
        credit_limit: p.credit_limit,
        used,
        reserved,
        reason: reached ? 'reached' : 'in_flight',
        periodic_reset: p.periodic_reset,
        resets_at: resetsAt,
      },
    },
  });
}

function priceUnknown(p: UsageLimitPolicy, provider: string, model: string | undefined): GatewayError {
  return new GatewayError(
    'price_unknown',
    `Cost limit "${p.name}" (policy ${p.id}) applies to this request, but the price table has no price for ${provider} model ${JSON.stringify(model ?? null)}: add it under \`prices\` in the bootstrap file.`,
    { extra: { usage_limit: { policy_id: p.id, policy_name: p.name, type: p.type, provider, model: model ?? null } } },
  );
}
