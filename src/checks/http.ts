/**
 * The only way checks reach the network (webhook, log, jwt's JWKS, validUrls lookups). Built once
 * by the composition root over the gateway's egress dispatcher (src/security/egress.ts), with the
 * same rules as every other outbound call:
 * - the URL must be http(s); IP literals and `localhost` names are checked before dispatch, and
 *   every connection on the address it dials, at connect time, so a name that resolves or re-binds
 *   to a private address is refused;
 * - redirects are never followed (a 3xx is an error), so a public URL cannot bounce the gateway to
 *   a private one;
 * - every call has a time limit and a cap on the answer's size;
 * - it sends only the headers it is given (callers strip secrets: see context.ts).
 */
import type { Dispatcher } from 'undici';
import { createEgressDispatcher } from '../security/egress.js';
import { customHostRefusal, type HostGuard } from '../security/host-guard.js';

export interface CheckHttpRequest {
  method: 'GET' | 'POST' | 'HEAD';
  headers?: Record<string, string>;
  body?: string;
  /** The call's own time limit (ms); `signal` may end it sooner. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Cap on the answer's body (bytes); default 1 MiB. */
  maxBytes?: number;
}

export interface CheckHttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export type CheckHttpErrorKind = 'host_refused' | 'redirect' | 'timeout' | 'unreachable' | 'too_large';

/** Why a check's HTTP call failed; the message names the host, never a header or body. */
export class CheckHttpError extends Error {
  readonly kind: CheckHttpErrorKind;
  constructor(kind: CheckHttpErrorKind, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'CheckHttpError';
    this.kind = kind;
  }
}

export interface CheckHttp {
  /** One call. Resolves with any non-3xx status; throws CheckHttpError otherwise. */
  request(url: string, init: CheckHttpRequest): Promise<CheckHttpResponse>;
  /** Resolves when `hostname` resolves to addresses the guard allows; throws CheckHttpError otherwise. */
  resolve(hostname: string, timeoutMs: number, signal?: AbortSignal): Promise<void>;
}

const DEFAULT_MAX_BYTES = 1 << 20;

function refusedMessage(host: string, e: { message: string }): string {
  // The guard's words name the field (custom_host by default); here the URL belongs to a check.
  return `${host} is not allowed: ${e.message.replace(/^(?:custom_host|The upstream host) /, '')}`;
}

function withTimeout(timeoutMs: number, signal?: AbortSignal): AbortSignal {
  const t = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([signal, t]) : t;
}

/**
 * A CheckHttp over `guard` and the egress `dispatcher` (the gateway's, which it does not close);
 * without one, an egress dispatcher of its own, closed by `close`.
 */
export function createCheckHttp(guard: HostGuard, dispatcher?: Dispatcher): CheckHttp & { close(): Promise<void> } {
  const agent = dispatcher ?? createEgressDispatcher(guard, { connections: 16, keepAliveTimeout: 4_000 });
  return {
    request: (url, init) => request(agent, guard, url, init),
    resolve: (hostname, timeoutMs, signal) => resolveHost(guard, hostname, timeoutMs, signal),
    close: () => (dispatcher ? Promise.resolve() : agent.close()),
  };
}

/** `url` parsed and allowed by the guard; throws CheckHttpError `host_refused` otherwise. */
function checkedUrl(guard: HostGuard, url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CheckHttpError('host_refused', 'not a valid URL');
  }
  try {
    guard.checkUrl(u.href);
  } catch (e) {
    throw new CheckHttpError('host_refused', refusedMessage(u.host, e as Error), e);
  }
  return u;
}

/** One call: its answer, unless the guard refuses the URL, or it redirects, fails or is too large. */
async function request(agent: Dispatcher, guard: HostGuard, url: string, init: CheckHttpRequest): Promise<CheckHttpResponse> {
  const u = checkedUrl(guard, url);
  const signal = withTimeout(init.timeoutMs, init.signal);
  let res: Dispatcher.ResponseData;
  try {
    res = await agent.request({ origin: u.origin, path: `${u.pathname}${u.search}`, method: init.method, headers: init.headers, body: init.body, signal });
  } catch (e) {
    throw classify(u, e, signal, init.timeoutMs);
  }
  if (res.statusCode >= 300 && res.statusCode < 400) {
    discard(res.body);
    throw new CheckHttpError('redirect', `${u.host} answered ${res.statusCode}; redirects are not followed`);
  }
  try {
    return { status: res.statusCode, headers: res.headers, text: await readCapped(u, res.body, init.maxBytes ?? DEFAULT_MAX_BYTES) };
  } catch (e) {
    if (e instanceof CheckHttpError) throw e;
    throw classify(u, e, signal, init.timeoutMs);
  }
}

/** An answer's body as text, up to `max` bytes; more is CheckHttpError `too_large`. */
async function readCapped(u: URL, body: Dispatcher.ResponseData['body'], max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += (c as Buffer).length;
    if (size > max) {
      discard(body);
      throw new CheckHttpError('too_large', `${u.host} answered more than ${max} bytes`);
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Resolves when `hostname` resolves to addresses the guard allows. */
async function resolveHost(guard: HostGuard, hostname: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  checkedUrl(guard, `http://${hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname}/`);
  const s = withTimeout(timeoutMs, signal);
  await new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(new CheckHttpError('timeout', `${hostname}: lookup timed out`));
    if (s.aborted) return onAbort();
    s.addEventListener('abort', onAbort, { once: true });
    guard.lookup(hostname, { all: true }, (err) => {
      s.removeEventListener('abort', onAbort);
      if (!err) return resolve();
      const refused = customHostRefusal(err);
      reject(
        refused
          ? new CheckHttpError('host_refused', refusedMessage(hostname, refused), err)
          : new CheckHttpError('unreachable', `${hostname} does not resolve (${err.code ?? 'error'})`, err),
      );
    });
  });
}

/** Drops an answer's body; the abort error undici then emits on it is expected, not unhandled. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

function classify(u: URL, e: unknown, signal: AbortSignal, timeoutMs: number): CheckHttpError {
  const refused = customHostRefusal(e);
  if (refused) return new CheckHttpError('host_refused', refusedMessage(u.host, refused), e);
  if (signal.aborted) {
    const r = signal.reason as { name?: string } | undefined;
    return new CheckHttpError('timeout', r?.name === 'TimeoutError' ? `${u.host} did not answer within ${timeoutMs} ms` : `${u.host}: the call was cancelled`, e);
  }
  const code = (e as { code?: string })?.code;
  return new CheckHttpError('unreachable', `${u.host} could not be reached (${code ?? 'error'})`, e);
}
