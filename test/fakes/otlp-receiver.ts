/**
 * A fake OTLP/HTTP traces receiver: a real `node:http` server on 127.0.0.1 (ephemeral port) that
 * takes `POST /v1/traces` with an OTLP JSON body (ExportTraceServiceRequest, as the OTLP/HTTP
 * specification encodes it: hex ids, attributes as `{key, value: {stringValue | intValue | …}}`),
 * answers 200 `{}` and keeps every span, flattened.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };

/** One received span with its attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP SpanKind: 2 SERVER, 3 CLIENT. */
  kind: number;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  attributes: Record<string, unknown>;
  /** The resource's attributes (service.name, …). */
  resource: Record<string, unknown>;
}

export const SERVER = 2;
export const CLIENT = 3;

function plain(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(plain);
  return undefined;
}

const attributesOf = (list: { key: string; value: AnyValue }[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, plain(a.value)]));

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Content types of the exports received. */
  readonly contentTypes: string[] = [];
  private waiters: { test: () => boolean; resolve: () => void }[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver!: OtlpReceiver;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        receiver.contentTypes.push(String(req.headers['content-type']));
        receiver.take(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${port}/v1/traces`);
    return receiver;
  }

  private take(body: { resourceSpans?: any[] }): void {
    for (const rs of body.resourceSpans ?? []) {
      const resource = attributesOf(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId || undefined,
            name: s.name,
            kind: s.kind,
            statusCode: s.status?.code ?? 0,
            attributes: attributesOf(s.attributes),
            resource,
          });
        }
      }
    }
    this.waiters = this.waiters.filter((w) => (w.test() ? (w.resolve(), false) : true));
  }

  /** The spans of one trace, once `test` holds for them (rejects after `timeoutMs`). */
  waitFor(traceId: string, test: (spans: ReceivedSpan[]) => boolean, timeoutMs = 5000): Promise<ReceivedSpan[]> {
    const of = (): ReceivedSpan[] => this.spans.filter((s) => s.traceId === traceId);
    if (test(of())) return Promise.resolve(of());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`spans of ${traceId} not received: ${JSON.stringify(of().map((s) => s.name))}`)), timeoutMs);
      this.waiters.push({
        test: () => test(of()),
        resolve: () => {
          clearTimeout(timer);
          resolve(of());
        },
      });
    });
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}
