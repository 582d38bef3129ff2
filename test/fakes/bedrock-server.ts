/**
 * A fake of the Bedrock runtime (Converse, ConverseStream) and of the control plane's model list,
 * written from AWS's API reference, not from the gateway's
 * translator: nothing here imports src/providers/.
 *
 * It checks credentials as AWS does: a SigV4 `Authorization` is verified by recomputing the
 * signature with the maintained signer (@smithy/signature-v4) over the headers the request says it
 * signed, the raw path (which the signer escapes once more, as AWS does for non-S3 services) and
 * the body; service `bedrock`, the fake's region, a known access key, a session token when the
 * credentials have one, and a date within 5 minutes of the fake's clock. A refusal is AWS's 403
 * `InvalidSignatureException` (restJson1: `x-amzn-errortype` header and `{message}` body). A Bedrock
 * API key (`Authorization: Bearer`) is accepted when it is the fake's.
 *
 * It validates Converse bodies the way the service does where the gateway could get it wrong
 * (unknown top-level fields, a first turn that is not `user`, tool blocks without `toolConfig`,
 * empty text blocks), and answers streams in `application/vnd.amazon.eventstream` frames encoded
 * with @smithy/eventstream-codec, split across writes and coalesced on purpose.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { Hash } from '@smithy/hash-node';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export const SIGNATURE_MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

/** One event of a ConverseStream answer: its `:event-type` and JSON payload. */
export interface BedrockEvent {
  type: string;
  payload: unknown;
}

export type BedrockScript =
  | { kind: 'json'; body: unknown }
  | { kind: 'error'; status: number; type: string; message: string; headers?: Record<string, string> }
  | {
      kind: 'stream';
      events: BedrockEvent[];
      /** After this many events, send an exception frame and end. */
      exceptionAfter?: { count: number; type: string; message: string };
      /** After this many events, cut the connection. */
      cutAfter?: number;
    };

export interface BedrockRequest {
  method: string;
  /** The raw request target, e.g. `/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse`. */
  rawPath: string;
  /** The decoded model id, or undefined for other routes. */
  modelId?: string;
  /** `converse`, `converse-stream`, `invoke`, `invoke-with-response-stream` or `foundation-models`. */
  operation: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** How the request authenticated: `sigv4`, `api-key`. */
  auth: string;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One event-stream frame (`:message-type` event or exception). */
export function eventFrame(type: string, payload: unknown, messageType: 'event' | 'exception' = 'event'): Uint8Array {
  const typeHeader = messageType === 'event' ? ':event-type' : ':exception-type';
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: messageType },
      [typeHeader]: { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/** A text answer as ConverseStream events, the text in `pieces`. */
export function textEvents(pieces: string[], usage = { inputTokens: 11, outputTokens: 4, totalTokens: 15 }): BedrockEvent[] {
  return [
    { type: 'messageStart', payload: { role: 'assistant', p: 'abcdef' } },
    ...pieces.map((text) => ({ type: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text }, p: 'ab' } })),
    { type: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
    { type: 'messageStop', payload: { stopReason: 'end_turn' } },
    { type: 'metadata', payload: { usage, metrics: { latencyMs: 42 } } },
  ];
}

/** A text block then one tool use whose JSON input arrives in `inputPieces`. */
export function toolEvents(text: string, id: string, name: string, inputPieces: string[]): BedrockEvent[] {
  const events: BedrockEvent[] = [{ type: 'messageStart', payload: { role: 'assistant' } }];
  if (text) {
    events.push({ type: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text } } });
    events.push({ type: 'contentBlockStop', payload: { contentBlockIndex: 0 } });
  }
  const idx = text ? 1 : 0;
  events.push({ type: 'contentBlockStart', payload: { contentBlockIndex: idx, start: { toolUse: { toolUseId: id, name } } } });
  for (const input of inputPieces) events.push({ type: 'contentBlockDelta', payload: { contentBlockIndex: idx, delta: { toolUse: { input } } } });
  events.push({ type: 'contentBlockStop', payload: { contentBlockIndex: idx } });
  events.push({ type: 'messageStop', payload: { stopReason: 'tool_use' } });
  events.push({ type: 'metadata', payload: { usage: { inputTokens: 20, outputTokens: 9, totalTokens: 29 }, metrics: { latencyMs: 7 } } });
  return events;
}

const CONVERSE_FIELDS = new Set([
  'messages', 'system', 'inferenceConfig', 'toolConfig', 'guardrailConfig', 'additionalModelRequestFields',
  'additionalModelResponseFieldPaths', 'promptVariables', 'requestMetadata', 'performanceConfig', 'serviceTier',
]);

/** What Converse refuses (a subset: the mistakes a translator makes), or undefined. */
function validateConverse(body: any): string | undefined {
  if (!body || typeof body !== 'object') return 'Malformed input request, please reformat your input and try again.';
  for (const k of Object.keys(body)) if (!CONVERSE_FIELDS.has(k)) return `Malformed input request: extraneous key [${k}] is not permitted, please reformat your input and try again.`;
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  if (body.messages[0].role !== 'user') return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  let toolBlocks = false;
  for (let i = 0; i < body.messages.length; i++) {
    const m = body.messages[i];
    if (i > 0 && body.messages[i - 1].role === m.role) return 'A conversation must alternate between user and assistant roles.';
    for (const b of m.content ?? []) {
      if ('text' in b && b.text === '') return 'The text field in the ContentBlock object is blank. Add text to the text field, and try again.';
      if (b.toolUse || b.toolResult) toolBlocks = true;
    }
  }
  if (toolBlocks && !body.toolConfig) return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
  return undefined;
}

function lastUserText(body: any): string {
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const m = body.messages[i];
    if (m.role !== 'user') continue;
    for (const b of m.content) if (typeof b.text === 'string') return b.text;
  }
  return '';
}

export const FAKE_FOUNDATION_MODELS = [
  { modelId: 'anthropic.claude-3-5-sonnet-20240620-v1:0', modelName: 'Claude 3.5 Sonnet', providerName: 'Anthropic' },
  { modelId: 'amazon.nova-pro-v1:0', modelName: 'Nova Pro', providerName: 'Amazon' },
];

export interface FakeBedrockOptions {
  region?: string;
  credentials?: AwsCredentials;
  apiKey?: string;
  /** The fake's clock (ms), for the 5-minute skew check. */
  now?: () => number;
}

export class FakeBedrock {
  readonly requests: BedrockRequest[] = [];
  private readonly scripts: BedrockScript[] = [];
  private readonly waiters: (() => void)[] = [];
  readonly region: string;
  readonly credentials: AwsCredentials;
  readonly apiKey: string;
  private readonly now: () => number;

  private constructor(
    private readonly server: http.Server,
    opts: FakeBedrockOptions,
  ) {
    this.region = opts.region ?? 'eu-west-3';
    this.credentials = opts.credentials ?? { accessKeyId: 'AKIAFAKEFAKEFAKE0001', secretAccessKey: 'fake/secret+key/0123456789abcdefABCDEF' };
    this.apiKey = opts.apiKey ?? 'ABSKfakeBedrockApiKey0123456789';
    this.now = opts.now ?? Date.now;
  }

  static async start(opts: FakeBedrockOptions = {}): Promise<FakeBedrock> {
    let fake!: FakeBedrock;
    const server = http.createServer((req, res) => void fake.handle(req, res));
    fake = new FakeBedrock(server, opts);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  enqueue(...scripts: BedrockScript[]): void {
    this.scripts.push(...scripts);
  }

  reset(): void {
    this.requests.length = 0;
    this.scripts.length = 0;
  }

  /** Resolves once `n` requests were recorded. */
  async waitForRequests(n: number): Promise<BedrockRequest[]> {
    while (this.requests.length < n) await new Promise<void>((r) => this.waiters.push(r));
    return this.requests.slice(0, n);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private record(r: BedrockRequest): void {
    this.requests.push(r);
    for (const w of this.waiters.splice(0)) w();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const raw = Buffer.concat(parts).toString('utf8');
    const rawPath = req.url ?? '/';
    const m = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/.exec(rawPath);
    const operation = m ? m[2]! : rawPath === '/foundation-models' ? 'foundation-models' : '';
    const auth = await this.authenticate(req, rawPath, raw);
    let body: any;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
    this.record({ method: req.method ?? '', rawPath, modelId: m ? decodeURIComponent(m[1]!) : undefined, operation, headers: req.headers, body, auth: auth.ok ? auth.how : 'refused' });
    if (!auth.ok) return this.error(res, 403, auth.type, auth.message);
    if (!operation) return this.error(res, 404, 'UnknownOperationException', `Unknown operation ${req.method} ${rawPath}`);
    if (operation === 'foundation-models') {
      if (req.method !== 'GET') return this.error(res, 405, 'UnknownOperationException', 'GET only');
      return this.json(res, 200, { modelSummaries: FAKE_FOUNDATION_MODELS });
    }
    if (operation === 'invoke' || operation === 'invoke-with-response-stream') return this.invoke(res, body, operation !== 'invoke');
    const invalid = validateConverse(body);
    if (invalid) return this.error(res, 400, 'ValidationException', invalid);
    const script = this.scripts.shift();
    if (script?.kind === 'error') return this.error(res, script.status, script.type, script.message, script.headers);
    if (operation === 'converse') {
      if (script && script.kind !== 'json') throw new Error(`scripted ${script.kind} for a converse request`);
      return this.json(
        res,
        200,
        script?.body ?? {
          output: { message: { role: 'assistant', content: [{ text: `echo: ${lastUserText(body)}` }] } },
          stopReason: 'end_turn',
          usage: { inputTokens: 10, outputTokens: 3, totalTokens: 13 },
          metrics: { latencyMs: 12 },
        },
      );
    }
    if (script && script.kind !== 'stream') throw new Error(`scripted ${script.kind} for a converse-stream request`);
    await this.stream(res, script ?? { kind: 'stream', events: textEvents(['echo: ', lastUserText(body)]) });
  }

  /**
   * Claude's InvokeModel / InvokeModelWithResponseStream: an Anthropic Messages body without `model`
   * and `stream`, with `anthropic_version` "bedrock-2023-05-31" (else a ValidationException); the
   * answer is Anthropic's message, or its events each as a `chunk` frame's base64 `bytes`.
   */
  private async invoke(res: http.ServerResponse, body: any, stream: boolean): Promise<void> {
    if (body?.anthropic_version !== 'bedrock-2023-05-31') return this.error(res, 400, 'ValidationException', 'anthropic_version: bedrock-2023-05-31 is required');
    if (body.model !== undefined || body.stream !== undefined) return this.error(res, 400, 'ValidationException', 'extraneous key [model, stream] is not permitted');
    if (!Number.isInteger(body.max_tokens) || !Array.isArray(body.messages)) return this.error(res, 400, 'ValidationException', 'max_tokens, messages: required');
    const script = this.scripts.shift();
    if (script?.kind === 'error') return this.error(res, script.status, script.type, script.message, script.headers);
    if (!stream) return this.json(res, 200, script?.kind === 'json' ? script.body : claudeMessage(lastClaudeText(body)));
    if (script && script.kind !== 'stream') throw new Error(`scripted ${script.kind} for an invoke-with-response-stream request`);
    const text = lastClaudeText(body);
    await this.stream(res, script ?? { kind: 'stream', events: claudeChunks(claudeTextEvents(text)) });
  }

  /** Frames written in three ways: the first split in two writes, then pairs coalesced, the rest one per write. */
  private async stream(res: http.ServerResponse, script: Extract<BedrockScript, { kind: 'stream' }>): Promise<void> {
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'fake-stream-request' });
    const frames: Uint8Array[] = [];
    const n = script.cutAfter ?? script.exceptionAfter?.count ?? script.events.length;
    for (const e of script.events.slice(0, n)) frames.push(eventFrame(e.type, e.payload));
    if (script.exceptionAfter) frames.push(eventFrame(script.exceptionAfter.type, { message: script.exceptionAfter.message }, 'exception'));
    const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
    let i = 0;
    if (frames.length > 0) {
      const first = frames[i++]!;
      res.write(first.subarray(0, 7));
      await turn();
      res.write(first.subarray(7));
      await turn();
    }
    while (i < frames.length) {
      if (i + 1 < frames.length && i % 2 === 1) {
        res.write(Buffer.concat([frames[i]!, frames[i + 1]!]));
        i += 2;
      } else {
        // A frame split inside its payload, in two writes.
        const f = frames[i++]!;
        const cut = Math.max(1, f.length - 9);
        res.write(f.subarray(0, cut));
        await turn();
        res.write(f.subarray(cut));
      }
      await turn();
    }
    if (script.cutAfter !== undefined) {
      res.socket?.destroy();
      return;
    }
    res.end();
  }

  private json(res: http.ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': 'fake-request' });
    res.end(JSON.stringify(body));
  }

  private error(res: http.ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, {
      'content-type': 'application/json',
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': 'fake-error',
      ...headers,
    });
    res.end(JSON.stringify({ message }));
  }

  private async authenticate(
    req: http.IncomingMessage,
    rawPath: string,
    body: string,
  ): Promise<{ ok: true; how: string } | { ok: false; type: string; message: string }> {
    const authz = req.headers.authorization ?? '';
    if (authz.startsWith('Bearer ')) {
      return authz.slice(7) === this.apiKey
        ? { ok: true, how: 'api-key' }
        : { ok: false, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
    }
    const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(authz);
    if (!m) return { ok: false, type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
    const [, akid, day, region, service, signedHeaders] = m as unknown as string[];
    if (akid !== this.credentials.accessKeyId) {
      return { ok: false, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
    }
    if (service !== 'bedrock' || region !== this.region) {
      return { ok: false, type: 'InvalidSignatureException', message: `Credential should be scoped to a valid region and to the correct service, 'bedrock'.` };
    }
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const dm = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
    if (!dm || amzDate.slice(0, 8) !== day) return { ok: false, type: 'InvalidSignatureException', message: 'Date must be in ISO-8601 basic format.' };
    const signedAt = Date.UTC(+dm[1]!, +dm[2]! - 1, +dm[3]!, +dm[4]!, +dm[5]!, +dm[6]!);
    if (Math.abs(this.now() - signedAt) > 5 * 60_000) {
      return { ok: false, type: 'InvalidSignatureException', message: `Signature expired: ${amzDate} is now earlier or later than the allowed 5 minutes.` };
    }
    const names = signedHeaders!.split(';');
    if (!names.includes('host') || !names.includes('x-amz-date')) {
      return { ok: false, type: 'InvalidSignatureException', message: 'The host and x-amz-date headers must be signed.' };
    }
    if (this.credentials.sessionToken !== undefined) {
      if (req.headers['x-amz-security-token'] !== this.credentials.sessionToken || !names.includes('x-amz-security-token')) {
        return { ok: false, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
      }
    }
    const claimed = req.headers['x-amz-content-sha256'];
    if (claimed !== undefined && claimed !== createHash('sha256').update(body).digest('hex')) {
      return { ok: false, type: 'InvalidSignatureException', message: 'The provided x-amz-content-sha256 header does not match what was computed.' };
    }
    const headers: Record<string, string> = {};
    for (const n of names) {
      const v = req.headers[n];
      if (v === undefined) return { ok: false, type: 'InvalidSignatureException', message: `Signed header ${n} is missing.` };
      headers[n] = Array.isArray(v) ? v.join(',') : v;
    }
    const signer = new SignatureV4({ service: 'bedrock', region: this.region, credentials: this.credentials, sha256: Hash.bind(null, 'sha256'), uriEscapePath: true, applyChecksum: false });
    const expected = await signer.sign(
      { method: req.method ?? 'GET', protocol: 'http:', hostname: '127.0.0.1', path: rawPath, query: {}, headers, body },
      { signingDate: new Date(signedAt) },
    );
    if (expected.headers.authorization !== authz) return { ok: false, type: 'InvalidSignatureException', message: SIGNATURE_MISMATCH };
    return { ok: true, how: 'sigv4' };
  }
}

/** The last user turn's text of a Messages body. */
function lastClaudeText(body: any): string {
  const last = body.messages.at(-1);
  return `echo: ${typeof last?.content === 'string' ? last.content : ''}`;
}

function claudeMessage(text: string): Record<string, unknown> {
  return { id: 'msg_bdrk_fake', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 7, output_tokens: 2 } };
}

/** An Anthropic stream of one text block, as event objects. */
export function claudeTextEvents(text: string): Record<string, unknown>[] {
  return [
    { type: 'message_start', message: { ...claudeMessage(''), content: [], stop_reason: null, usage: { input_tokens: 7, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
    { type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 7, outputTokenCount: 2, invocationLatency: 12, firstByteLatency: 5 } },
  ];
}

/** Anthropic events as InvokeModelWithResponseStream sends them: each its JSON's bytes, base64, in a `chunk` event. */
export function claudeChunks(events: Record<string, unknown>[]): BedrockEvent[] {
  return events.map((e) => ({ type: 'chunk', payload: { bytes: Buffer.from(JSON.stringify(e), 'utf8').toString('base64') } }));
}
