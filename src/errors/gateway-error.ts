import { ERROR_CATALOG, type ErrorCode } from './codes.js';

/** One problem found by validation, with the path of the offending field. */
export interface Issue {
  path: (string | number)[];
  message: string;
  code?: string;
}

export interface GatewayErrorOptions {
  /** Name of the offending parameter, field path or header (OpenAI's `param`). */
  param?: string | null;
  issues?: Issue[];
  /** Status to answer with instead of the catalog's (upstream errors keep the provider's status). */
  status?: number;
  /** Upstream error code or type, kept when passing an upstream error through. */
  upstreamCode?: string | null;
  upstreamType?: string;
  headers?: Record<string, string>;
  /** More top-level fields of the error body (e.g. `hook_results` of a 446). */
  extra?: Record<string, unknown>;
  cause?: unknown;
}

/** The only error type that leaves the gateway's core; http/errors.ts turns it into a response. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly issues?: Issue[];
  readonly upstreamCode?: string | null;
  readonly headers?: Record<string, string>;
  readonly extra?: Record<string, unknown>;

  constructor(code: ErrorCode, message?: string, opts: GatewayErrorOptions = {}) {
    const entry = ERROR_CATALOG[code];
    super(message ?? entry.message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = opts.status ?? entry.status;
    this.type = opts.upstreamType ?? entry.type;
    this.param = opts.param ?? null;
    this.issues = opts.issues;
    this.upstreamCode = opts.upstreamCode;
    this.headers = opts.headers;
    this.extra = opts.extra;
  }

  /** The OpenAI-style envelope. */
  toBody(traceId: string): Record<string, unknown> {
    const error: Record<string, unknown> = {
      message: this.message,
      type: this.type,
      code: this.upstreamCode ?? this.code,
      param: this.param,
    };
    const body: Record<string, unknown> = { error, trace_id: traceId };
    if (this.issues) body.issues = this.issues;
    if (this.extra) Object.assign(body, this.extra);
    return body;
  }
}

export const isGatewayError = (e: unknown): e is GatewayError => e instanceof GatewayError;

/** Anything thrown that is not a GatewayError becomes internal_error (its message is not leaked). */
export function toGatewayError(e: unknown): GatewayError {
  if (e instanceof GatewayError) return e;
  return new GatewayError('internal_error', undefined, { cause: e });
}
