/**
 * The ledger: every answer priced (the `x-gateway-cost` header, the log's `cost`, the usage
 * metrics), and when it is over, the request's reservations settled with what its upstream attempts
 * reported. It implements the accounting's `Ledger` (src/operators/accounting.ts).
 */
import type { Price } from '../config/prices.js';
import type { Telemetry } from '../metrics/telemetry.js';
import { costOf, roundCost } from '../pricing/cost.js';
import type { PriceTable } from '../pricing/prices.js';
import { toUnits, type SettleItem } from '../state/usage-counters.js';
import type { AnswerMeta } from '../upstream/events.js';
import { candidateAt, fitsTarget, groupOf, modelOf, text } from './matching.js';
import type { Settlement } from './settlement.js';
import type { Attempt, Held, KeyScope, LimitedRequest } from './types.js';

export interface LedgerDeps {
  prices: PriceTable;
  telemetry: Telemetry;
  settlement: Pick<Settlement, 'settle'>;
}

const isCacheHit = (meta: AnswerMeta): boolean => meta.cacheStatus === 'HIT' || meta.cacheStatus === 'SEMANTIC_HIT';

export class UsageLedger {
  constructor(private readonly deps: LedgerDeps) {}

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
      const c = this.attemptCost(req, s);
      if (c === null) return undefined;
      total += c;
    }
    return roundCost(total);
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
        this.deps.telemetry.usage(workspace, s.meta.provider, s.usage, this.attemptCost(req, s) ?? undefined);
      }
    }
    return this.release(req);
  }

  /** Settle the request's reservations with what its upstream attempts reported (once; undefined when it held none). */
  release(req: LimitedRequest): Promise<void> | undefined {
    const hold = req.limits;
    if (!hold || hold.done) return undefined;
    hold.done = true;
    const key = req.key!;
    const actual = hold.held.map((h) => this.actualOf(req, key, h));
    return this.deps.settlement.settle({ reservation: hold.reservation, actual, held: hold.held, scope: key });
  }

  /** One attempt's cost, priced once (the answer's cost and the end's metrics both read it). */
  private attemptCost(req: LimitedRequest, s: Attempt): number | null {
    if (s.cost === undefined) {
      const price = this.priceOf(req, s.meta);
      s.cost = price === undefined ? null : costOf(s.usage!, price);
    }
    return s.cost;
  }

  private priceOf(req: LimitedRequest, meta: AnswerMeta): Price | undefined {
    const c = candidateAt(req, meta.target);
    return this.deps.prices.lookup(meta.provider, c ? modelOf(c, req) : text(req.request.body?.model) || undefined);
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
      const c = candidateAt(req, s.meta.target);
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
}
