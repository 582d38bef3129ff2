import { catchError, defer, from, map, switchMap, throwError, type Observable } from 'rxjs';
import type { TargetNode } from '../plan/types.js';
import type { Endpoint, Provider, ProviderRequest, UpstreamRequest } from '../providers/types.js';
import { mapRanges } from '../providers/ranges.js';
import { fitContext } from '../providers/context-fit.js';
import { ContextWindows } from '../pricing/context-windows.js';
import { refusedBy } from '../errors/cannot-serve.js';
import type { TargetLabels } from '../metrics/telemetry.js';
import type { AttemptStart } from '../metrics/tracing.js';
import { maxTokensOf } from '../metrics/answer-facts.js';
import { callUpstream, type ErrorMapper } from '../upstream/call.js';
import { prepareRequest } from '../upstream/prepare.js';
import { redactText, secretValues } from '../config/provider-fields.js';
import { decodeUpstream } from '../operators/decode-upstream.js';
import { measure } from '../operators/measure.js';
import { attemptTimeout } from '../operators/timeout.js';
import { memoByObject } from '../util/memo.js';
import type { PipelineDeps, RequestContext } from './context.js';
import type { AnswerMeta, GatewayEvent } from '../upstream/events.js';

/** The request as this target sends it: override_params win over the body; its forward_headers. */
export function requestFor(node: TargetNode, ctx: RequestContext): ProviderRequest {
  const base = ctx.request;
  const o = node.settings.override_params;
  const fwd = node.settings.forward_headers;
  if (!o && !fwd) return base;
  const req: ProviderRequest = { ...base };
  if (o && base.body) req.body = { ...base.body, ...o };
  if (fwd) req.forwardHeaders = fwd;
  return req;
}

/** The windows when the pipeline was built without its own (tests, benchmarks). */
const SHIPPED_WINDOWS = new ContextWindows();

const joinSaid = (a: string | undefined, b: string | undefined): string | undefined => (a === undefined ? b : b === undefined ? a : `${a},${b}`);

/** The secret strings of a target (its key, its secret cloud fields), once per plan node. */
const secretsOf = memoByObject((node: TargetNode): string[] => secretValues({ ...node.target.extra, api_key: node.target.api_key }));

const labelsByNode = memoByObject((_node: TargetNode): Partial<Record<Endpoint, TargetLabels>> => ({}));

/**
 * The metric labels of a target for one endpoint: one object per plan node and endpoint (plans are
 * cached), so telemetry can bind its series to it once.
 */
export function targetLabels(node: TargetNode, endpoint: Endpoint): TargetLabels {
  return (labelsByNode(node)[endpoint] ??= { target: node.id, provider: node.target.provider, endpoint });
}

/** What an attempt's span says at its start (tracing on only). */
function attemptStart(node: TargetNode, req: ProviderRequest, meta: AnswerMeta, attempt: number): AttemptStart {
  const body = req.body;
  return {
    endpoint: req.endpoint,
    provider: meta.provider,
    target: node.id,
    attempt,
    retry: meta.retries,
    model: typeof body?.model === 'string' ? body.model : undefined,
    maxTokens: maxTokensOf(body),
    stream: req.stream,
  };
}

/**
 * The answer the gateway makes itself for a target whose provider does not serve the endpoint and
 * has a local answer for it (a token count, estimated): no upstream call, so no attempt and no
 * upstream metrics; a request it cannot answer is refused as a translation refuses one.
 */
function answeredLocally(provider: Provider, req: ProviderRequest, node: TargetNode): Observable<GatewayEvent> {
  const meta: AnswerMeta = { provider: provider.descriptor.id, target: node.path, retries: 0 };
  return from(provider.answer!(req)).pipe(
    map((r): GatewayEvent => ({ type: 'json', status: 200, body: r.body, meta })),
    catchError((e: unknown) => throwError(() => refusedBy(e, provider.descriptor.id, node.path))),
  );
}

/**
 * Attempts at one target: map parameters into the provider's ranges, translate, call, decode, bounded
 * by request_timeout, measured. Cold; each subscription is one attempt, and the n-th re-subscription
 * (by a retry) is retry number n. A request the translator refuses fails with TargetCannotServe.
 */
export function callTarget(node: TargetNode, ctx: RequestContext, deps: PipelineDeps): Observable<GatewayEvent> {
  let retryNumber = 0;
  return defer(() => {
    let req = requestFor(node, ctx);
    const provider = deps.registry.serving(deps.registry.get(node.target.provider), req.endpoint, req.body?.model);
    if (provider.answer) return answeredLocally(provider, req, node);
    let upstream: UpstreamRequest;
    let said: string | undefined;
    try {
      // The Responses API's truncation rule, by the model this target sends: before ranges and translation.
      const fitted = req.endpoint === 'responses' && req.body ? fitContext(req.body, deps.contextWindows ?? SHIPPED_WINDOWS) : undefined;
      if (fitted) req = { ...req, body: fitted.body };
      const ranges = provider.descriptor.ranges;
      const mapped = ranges && req.body ? mapRanges(ranges, req.body) : undefined;
      if (mapped) req = { ...req, body: mapped.body };
      said = joinSaid(fitted?.said, mapped?.said);
      upstream = provider.toProvider(req, node.target, deps.registry.baseUrl(provider, node.target));
    } catch (e) {
      // Refused in translation (or by the model's context window): the provider was never asked, so
      // it is no attempt and no failure of this target (a fallback or loadbalance passes it over).
      throw refusedBy(e, provider.descriptor.id, node.path);
    }
    ctx.outcome.attempts++;
    const meta: AnswerMeta = { provider: provider.descriptor.id, target: node.path, retries: retryNumber++ };
    if (said !== undefined) meta.paramsMapped = said;
    const secrets = secretsOf(node);
    // A provider may echo a credential in its error message: it never reaches the client or the log.
    const mapError: ErrorMapper = (status, text, headers) =>
      provider.fromError(status, secrets.length > 0 ? redactText(text, secrets) : text, headers, req);
    const framing = provider.descriptor.framing;
    const flow = req.stream ? ctx.flow : undefined;
    // The provider's async step (sign, fetch a token) runs inside the attempt: timed out and cancelled with it.
    const prepared = prepareRequest(provider, upstream, node.target, { now: deps.now, fetch: deps.fetch });
    const call = prepared
      ? prepared.pipe(switchMap((u) => callUpstream(deps.dispatcher, u, mapError, framing, flow, deps.upstreamLimits)))
      : callUpstream(deps.dispatcher, upstream, mapError, framing, flow, deps.upstreamLimits);
    const span = ctx.span;
    const attempt = ctx.outcome.attempts;
    return call.pipe(
      decodeUpstream({ provider, request: req, meta, target: node.target }),
      attemptTimeout<GatewayEvent>({
        firstMs: node.settings.request_timeout,
        idleMs: req.stream ? deps.streamIdleTimeoutMs : undefined,
        scheduler: deps.scheduler,
        flow,
      }),
      measure({
        labels: targetLabels(node, req.endpoint),
        telemetry: deps.telemetry,
        now: deps.now,
        clock: ctx.outcome,
        meta,
        account: ctx.outcome,
        traceId: ctx.traceId,
        // Tracing off: no closure, no span.
        startSpan: span && (() => span.attempt(attemptStart(node, req, meta, attempt))),
      }),
    );
  });
}
