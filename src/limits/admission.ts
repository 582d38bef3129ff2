/**
 * Admission: a request is admitted against the usage-limit policies it matches while each has some
 * of its limit left, counting what requests in flight reserved; then it reserves its estimate on
 * each, all or nothing; else 412 naming the policy. A cost policy over a target whose model has no
 * price is a 412 `price_unknown`; counters out of reach are a 503 `usage_limits_unavailable` when
 * failing closed, an admission with a (rate-limited) warning when failing open.
 */
import { GatewayError } from '../errors/gateway-error.js';
import type { Telemetry } from '../metrics/telemetry.js';
import { costOf } from '../pricing/cost.js';
import type { PriceTable } from '../pricing/prices.js';
import { estimateTokens, type TokenEstimate } from '../pricing/usage-estimate.js';
import type { UsageLimitPolicy } from '../state/policy-store.js';
import { fromUnits, type ReserveItem, type ReserveOutcome, type UsageCounters } from '../state/usage-counters.js';
import { candidatesOf, fitsTarget, groupOf, modelOf, staticMatch } from './matching.js';
import type { PolicyIndex } from './policy-index.js';
import type { Candidate, Compiled, Held, KeyScope, LimitedRequest, StoreErrorMode, UsageLimitsLogger } from './types.js';

export interface AdmissionDeps {
  index: PolicyIndex;
  counters: Pick<UsageCounters, 'reserve'>;
  prices: PriceTable;
  telemetry: Telemetry;
  logger: UsageLimitsLogger;
  now: () => number;
  onStoreError: StoreErrorMode;
  /** Warnings of fail-open admissions are logged at most this often (ms). Default 10 s. */
  warnIntervalMs?: number;
}

/** What a request reserves: one item per matched policy, for the counters, and how each was matched. */
interface Claim {
  items: ReserveItem[];
  held: Held[];
}

export class Admission {
  private lastWarn = -Infinity;
  private suppressed = 0;

  constructor(private readonly deps: AdmissionDeps) {}

  /**
   * Match, estimate and reserve: undefined when no policy applies (nothing to wait for), else the
   * admission (resolves once reserved, with the request's `limits` set; rejects with 412, or 503
   * when failing closed). Throws 412 `price_unknown` at once when a cost policy applies to a target
   * whose model has no price.
   */
  admit(req: LimitedRequest): Promise<void> | undefined {
    const key = req.key;
    const plan = req.plan;
    const endpoint = req.request.endpoint;
    // Listing models and counting tokens cost nothing: no policy holds them back.
    if (!key || !plan || endpoint === 'models' || endpoint === 'count_tokens') return undefined;
    const [ws, org] = this.deps.index.scopesOf(key);
    if (!ws && !org) return undefined;
    const claim = this.claim(req, key, candidatesOf(plan), [ws, org]);
    if (claim.items.length === 0) return undefined;
    const now = this.deps.now();
    return this.deps.counters.reserve(claim.items, now).then(
      (out) => this.reserved(req, claim, out),
      (e: unknown) => this.unreachable(now, e, claim.held),
    );
  }

  /** Every policy of the key's scopes the request matches, with its estimate in the policy's units. */
  private claim(req: LimitedRequest, key: KeyScope, candidates: Candidate[], lists: (Compiled[] | undefined)[]): Claim {
    const claim: Claim = { items: [], held: [] };
    const estimates = new Map<Candidate, TokenEstimate>();
    const estimate = (c: Candidate): TokenEstimate => {
      let e = estimates.get(c);
      if (!e) estimates.set(c, (e = estimateTokens(req.request.endpoint, req.request.body, c.override)));
      return e;
    };
    for (const list of lists) {
      if (!list) continue;
      for (const p of list) {
        if (!staticMatch(p, req, key)) continue;
        let first: Candidate | undefined;
        let units = 0;
        for (const c of candidates) {
          if (!fitsTarget(p, c, req)) continue;
          first ??= c;
          units = Math.max(units, this.units(p.policy, c, req, estimate(c)));
        }
        if (!first) continue;
        const pol = p.policy;
        claim.items.push({ policyId: pol.id, type: pol.type, reset: pol.periodic_reset, group: groupOf(p, req, key, first), estimate: units, limit: p.limit, alertAt: p.alertAt });
        claim.held.push({ policy: p, estimate: units });
      }
    }
    return claim;
  }

  /** An estimate in a policy's counter units: tokens, or its cost at the target's price (nano-USD, rounded up). */
  private units(policy: UsageLimitPolicy, c: Candidate, req: LimitedRequest, e: TokenEstimate): number {
    if (policy.type === 'tokens') return e.input + e.output;
    const model = modelOf(c, req);
    const price = this.deps.prices.lookup(c.provider, model);
    if (!price) throw priceUnknown(policy, c.provider, model);
    return Math.ceil(costOf({ prompt_tokens: e.input, completion_tokens: e.output, total_tokens: e.input + e.output }, price) * 1e9);
  }

  private reserved(req: LimitedRequest, claim: Claim, out: ReserveOutcome): void {
    if (out.ok) {
      req.limits = { reservation: out.reservation, held: claim.held, done: false };
      return;
    }
    const p = claim.held[out.refused]!.policy.policy;
    this.deps.telemetry.limitRejected(p.id);
    throw refusal(p, claim.items[out.refused]!, out.used, out.reserved, out.periodEnd);
  }

  /** The counters could not be reached: 503 when failing closed; else admitted, and said so. */
  private unreachable(now: number, e: unknown, held: Held[]): void {
    if (this.deps.onStoreError === 'closed') {
      this.deps.telemetry.limitStoreError('refused');
      throw new GatewayError('usage_limits_unavailable', undefined, { cause: e });
    }
    this.deps.telemetry.limitStoreError('admitted');
    this.warnOpen(now, e, held);
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
