import { createHash } from 'node:crypto';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, RandomIdGenerator, type IdGenerator, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { Usage } from '../config/wire.js';
import * as A from './semconv.js';
import type { Outcome } from './telemetry.js';
import { OPERATION } from './target-metrics.js';
import type { AnswerFacts, AttemptSpan, AttemptStart, RequestEnd, RequestSpan, Tracing } from './tracing.js';

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const ZERO = '0'.repeat(32);

/**
 * The OpenTelemetry trace id of a gateway trace id: the same 128 bits when it is a UUID or 32 hex
 * digits (the gateway makes UUIDs), else the first 128 bits of its SHA-256, so any trace id a
 * client sends in x-gateway-trace-id maps to one OTel trace id that anyone can compute.
 */
export function otelTraceId(gatewayTraceId: string): string {
  if (UUID.test(gatewayTraceId)) {
    const hex = gatewayTraceId.replaceAll('-', '').toLowerCase();
    if (hex !== ZERO) return hex;
  }
  return createHash('sha256').update(gatewayTraceId).digest('hex').slice(0, 32);
}

/** Random ids, except for the one trace id `next` holds while a request's root span is made. */
class GatewayIds implements IdGenerator {
  next: string | undefined;
  private readonly random = new RandomIdGenerator();
  generateTraceId(): string {
    const id = this.next ?? this.random.generateTraceId();
    this.next = undefined;
    return id;
  }
  generateSpanId(): string {
    return this.random.generateSpanId();
  }
}

export interface OtelTracingOptions {
  exporter: SpanExporter;
  serviceVersion: string;
  /** Milliseconds between batch exports (BatchSpanProcessor's scheduledDelayMillis). */
  exportDelayMs?: number;
}

/** `name`'s value on `span` unless absent. */
function set(span: Span, name: string, value: string | number | boolean | string[] | undefined): void {
  if (value !== undefined) span.setAttribute(name, value);
}

function setUsage(span: Span, usage: Usage | undefined): void {
  if (!usage) return;
  span.setAttribute(A.ATTR_GEN_AI_USAGE_INPUT_TOKENS, usage.prompt_tokens);
  span.setAttribute(A.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, usage.completion_tokens);
}

/** GenAI's span name: `{operation} {model}`, or the operation alone. */
const spanName = (operation: string, model: string | undefined): string => (model ? `${operation} ${model}` : operation);

class OtelAttemptSpan implements AttemptSpan {
  private model: string | undefined;
  private reasons: string[] | undefined;
  constructor(private readonly span: Span) {}

  note(facts: AnswerFacts | undefined, usage: Usage | undefined): void {
    if (facts?.model) this.model = facts.model;
    if (facts?.finishReasons) this.reasons = facts.finishReasons;
    setUsage(this.span, usage);
  }

  end(outcome: Outcome, status: number, errorCode?: string): void {
    const s = this.span;
    set(s, A.ATTR_GEN_AI_RESPONSE_MODEL, this.model);
    set(s, A.ATTR_GEN_AI_RESPONSE_FINISH_REASONS, this.reasons);
    s.setAttribute(A.ATTR_SLUICE_OUTCOME, outcome);
    if (status > 0) s.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    if (outcome !== 'success' && outcome !== 'cancelled') {
      s.setAttribute(ATTR_ERROR_TYPE, errorCode ?? outcome);
      s.setStatus({ code: SpanStatusCode.ERROR });
    }
    s.end();
  }
}

class OtelRequestSpan implements RequestSpan {
  private readonly parent: Context;
  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
  ) {
    this.parent = trace.setSpan(ROOT_CONTEXT, span);
  }

  attempt(a: AttemptStart): AttemptSpan {
    const operation = OPERATION[a.endpoint];
    const attributes: Attributes = {
      [A.ATTR_GEN_AI_OPERATION_NAME]: operation,
      [A.ATTR_GEN_AI_PROVIDER_NAME]: a.provider,
      [A.ATTR_SLUICE_TARGET]: a.target,
      [A.ATTR_SLUICE_ATTEMPT]: a.attempt,
      [A.ATTR_SLUICE_RETRY]: a.retry,
      [A.ATTR_SLUICE_STREAM]: a.stream,
    };
    if (a.model !== undefined) attributes[A.ATTR_GEN_AI_REQUEST_MODEL] = a.model;
    if (a.maxTokens !== undefined) attributes[A.ATTR_GEN_AI_REQUEST_MAX_TOKENS] = a.maxTokens;
    const span = this.tracer.startSpan(spanName(operation, a.model), { kind: SpanKind.CLIENT, attributes }, this.parent);
    return new OtelAttemptSpan(span);
  }

  end(e: RequestEnd): void {
    const s = this.span;
    if (e.endpoint) {
      const operation = OPERATION[e.endpoint];
      s.updateName(spanName(operation, e.model));
      s.setAttribute(A.ATTR_GEN_AI_OPERATION_NAME, operation);
    }
    s.setAttribute(ATTR_HTTP_REQUEST_METHOD, e.method);
    s.setAttribute(ATTR_URL_PATH, e.path);
    s.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, e.status);
    set(s, A.ATTR_GEN_AI_REQUEST_MODEL, e.model);
    set(s, A.ATTR_GEN_AI_REQUEST_MAX_TOKENS, e.maxTokens);
    set(s, A.ATTR_GEN_AI_PROVIDER_NAME, e.provider);
    set(s, A.ATTR_SLUICE_TARGET, e.target);
    set(s, A.ATTR_SLUICE_ATTEMPTS, e.attempts);
    set(s, A.ATTR_SLUICE_STREAM, e.stream);
    set(s, A.ATTR_SLUICE_CACHE_STATUS, e.cacheStatus);
    set(s, A.ATTR_SLUICE_HOOK_VERDICT, e.hookVerdict);
    setUsage(s, e.usage);
    if (e.clientAborted) s.setAttribute(A.ATTR_SLUICE_CLIENT_ABORTED, true);
    // A server span is an error for a 5xx only (a 4xx is the client's); a denial names its code too.
    if (e.errorCode) s.setAttribute(ATTR_ERROR_TYPE, e.errorCode);
    if (e.status >= 500) s.setStatus({ code: SpanStatusCode.ERROR });
    s.end();
  }
}

/**
 * Tracing with the OpenTelemetry SDK: a tracer provider of its own (never the global one), its spans
 * batched to `exporter`. A request's span has the gateway's trace id (`otelTraceId`), and the
 * gateway's own id as `sluice.trace_id`.
 */
export class OtelTracing implements Tracing {
  private readonly ids = new GatewayIds();
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;

  constructor(o: OtelTracingOptions) {
    this.provider = new BasicTracerProvider({
      idGenerator: this.ids,
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'sluice', [ATTR_SERVICE_VERSION]: o.serviceVersion }),
      spanProcessors: [new BatchSpanProcessor(o.exporter, { scheduledDelayMillis: o.exportDelayMs ?? 5000 })],
    });
    this.tracer = this.provider.getTracer('sluice', o.serviceVersion);
  }

  startRequest(traceId: string, startMs: number): RequestSpan {
    // The id generator is asked for the root span's trace id inside this synchronous call.
    this.ids.next = otelTraceId(traceId);
    const span = this.tracer.startSpan('request', { kind: SpanKind.SERVER, startTime: startMs, attributes: { [A.ATTR_SLUICE_TRACE_ID]: traceId } }, ROOT_CONTEXT);
    this.ids.next = undefined;
    return new OtelRequestSpan(this.tracer, span);
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}
