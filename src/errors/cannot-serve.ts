import { GatewayError } from './gateway-error.js';

/** One target's refusal: its translator found a field (or an endpoint) the provider cannot serve. */
export interface Refusal {
  provider: string;
  /** JSON path of the target in the config, e.g. `config.targets[1]`. */
  target: string;
  param: string | null;
  message: string;
}

/**
 * A request some targets cannot serve, found while translating it: the provider was never asked.
 * Fallback and loadbalance pass such a target over whatever their status codes say, and answer with
 * this error only when no target could serve (`noTargetCanServe`); a real failure of another target
 * is the answer before it. Keeps the translator's code, status, param and (for one target) message.
 */
export class TargetCannotServe extends GatewayError {
  constructor(
    readonly refusals: readonly Refusal[],
    from: GatewayError,
    message: string = from.message,
  ) {
    super(from.code, message, { param: from.param, status: from.status });
  }

  /** The target an error response names: the one that refused, when there is exactly one. */
  get refusingTarget(): { provider: string; target: string; retries: number } | undefined {
    const only = this.refusals.length === 1 ? this.refusals[0]! : undefined;
    return only && { provider: only.provider, target: only.target, retries: 0 };
  }
}

/** Codes a translator uses to say the request asks for what the provider has not got. */
const REFUSING = new Set(['invalid_request_body', 'unsupported_endpoint', 'context_length_exceeded']);

/** A translator's error → a TargetCannotServe naming the target; any other error as it is. */
export function refusedBy(err: unknown, provider: string, target: string): unknown {
  if (!(err instanceof GatewayError) || err instanceof TargetCannotServe || !REFUSING.has(err.code)) return err;
  return new TargetCannotServe([{ provider, target, param: err.param, message: err.message }], err);
}

/**
 * The answer when every target of a strategy refused: a 400 naming each target and what it cannot
 * serve, its param the first refusal's field. One refusal is that refusal, unchanged.
 */
export function noTargetCanServe(errors: readonly TargetCannotServe[]): TargetCannotServe {
  if (errors.length === 1) return errors[0]!;
  const refusals = errors.flatMap((e) => e.refusals);
  const each = refusals.map((r) => `${r.target} (${r.provider}): ${r.message}`).join('; ');
  const fields = [...new Set(refusals.map((r) => r.param).filter((p) => p !== null))];
  const what = fields.length > 0 ? ` (${fields.join(', ')})` : '';
  return new TargetCannotServe(refusals, errors[0]!, `No target can serve this request${what}: ${each}`);
}
