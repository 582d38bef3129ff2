import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * POSTs one OTLP/HTTP JSON export body and resolves with the HTTP status; rejects on a transport
 * failure. The composition root makes it over the gateway's egress (src/security/egress.ts).
 */
export type OtlpPost = (body: Uint8Array, signal: AbortSignal) => Promise<number>;

export interface OtlpExporterOptions {
  post: OtlpPost;
  /** Milliseconds one export may take before it is aborted. */
  timeoutMs: number;
  /** Told of each failed export (its status, or the transport error). */
  onFailure: (reason: string) => void;
}

/**
 * A span exporter speaking OTLP/HTTP JSON (`/v1/traces`), encoded by @opentelemetry/otlp-transformer
 * (the serializer @opentelemetry/exporter-trace-otlp-http uses) and sent by `post`: the gateway's
 * guarded egress, instead of the sockets that exporter opens itself.
 */
export class OtlpJsonExporter implements SpanExporter {
  private readonly pending = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly o: OtlpExporterOptions) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    if (this.stopped) return done({ code: ExportResultCode.FAILED, error: new Error('the exporter is shut down') });
    const body = JsonTraceSerializer.serializeRequest(spans);
    if (!body) return done({ code: ExportResultCode.FAILED, error: new Error('the spans could not be encoded') });
    const p = this.send(body).then(done);
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  private async send(body: Uint8Array): Promise<ExportResult> {
    try {
      const status = await this.o.post(body, AbortSignal.timeout(this.o.timeoutMs));
      if (status >= 200 && status < 300) return { code: ExportResultCode.SUCCESS };
      this.o.onFailure(`the collector answered ${status}`);
      return { code: ExportResultCode.FAILED, error: new Error(`OTLP export answered ${status}`) };
    } catch (e) {
      this.o.onFailure((e as Error).message);
      return { code: ExportResultCode.FAILED, error: e as Error };
    }
  }

  async forceFlush(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    await this.forceFlush();
  }
}
