import type { Endpoint, Usage } from '../config/wire.js';
import type { Outcome } from './telemetry.js';

/**
 * Request tracing, a port: the edge starts a request's span, each upstream attempt a child of it.
 * Absent (`undefined` in the deps) when tracing is off: then nothing here is called and no span
 * object is made. The OpenTelemetry implementation is otel-tracing.ts.
 */
export interface Tracing {
  /** A request's span (SERVER), from `startMs` (epoch ms); `traceId` is the gateway's trace id. */
  startRequest(traceId: string, startMs: number): RequestSpan;
  /** Exports what is still buffered; later spans are dropped. */
  shutdown(): Promise<void>;
}

export interface RequestSpan {
  /** An upstream attempt began: its span (CLIENT), a child of the request's. */
  attempt(a: AttemptStart): AttemptSpan;
  /** The request ended (its response closed): its attributes, then the span ends. */
  end(e: RequestEnd): void;
}

export interface AttemptSpan {
  /** What the answer said so far (an event of it): response model, finish reasons, usage. */
  note(facts: AnswerFacts | undefined, usage: Usage | undefined): void;
  /** The attempt ended; `errorCode`: the gateway error code when it failed. */
  end(outcome: Outcome, status: number, errorCode?: string): void;
}

/** What an answer's body tells of it, for `gen_ai.response.*`. */
export interface AnswerFacts {
  model?: string;
  finishReasons?: string[];
}

/** An upstream attempt at its start. */
export interface AttemptStart {
  endpoint: Endpoint;
  /** The provider's descriptor id. */
  provider: string;
  /** The target's name, else its JSON path. */
  target: string;
  /** 1 for the request's first attempt, counting every retry, fallback and hedge. */
  attempt: number;
  /** The retry number at this target (0: its first try). */
  retry: number;
  model?: string | undefined;
  maxTokens?: number | undefined;
  stream: boolean;
}

/** A request at its end, as the edge saw it. */
export interface RequestEnd {
  /** Absent when the request was refused before its body was read (no front door's request yet). */
  endpoint?: Endpoint | undefined;
  method: string;
  path: string;
  status: number;
  stream?: boolean | undefined;
  model?: string | undefined;
  maxTokens?: number | undefined;
  /** The answering (or last failing) target and its provider. */
  provider?: string | undefined;
  target?: string | undefined;
  attempts?: number | undefined;
  cacheStatus?: string | undefined;
  /** pass, fail or deny: the worst of the request's hook and guardrail verdicts. */
  hookVerdict?: 'pass' | 'fail' | 'deny' | undefined;
  usage?: Usage | undefined;
  errorCode?: string | undefined;
  clientAborted: boolean;
}
