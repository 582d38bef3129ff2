/**
 * A fake of Vertex AI (Gemini generateContent / streamGenerateContent?alt=sse, the publisher model
 * list) and of Google's OAuth token endpoint, written from Google's API reference,
 * not from the gateway's translator (nothing is imported from it).
 *
 * - `POST /token`: the service-account JWT-bearer exchange. The assertion is VERIFIED: RS256 signature
 *   against the service account's public key (an RSA pair generated in memory at start; no key on
 *   disk), `kid`, `iss` = client_email, `aud` = the URL it was sent to (the token_uri), `scope` = cloud-platform, iat/exp against
 *   the fake's clock, lifetime at most 3600 s. Answers `{access_token, expires_in, token_type}` or 400
 *   `{error:"invalid_grant", error_description}` as Google does. Exchanges are counted.
 * - `POST /v1/projects/{p}/locations/{r}/publishers/google/models/{m}:generateContent` (and
 *   `:streamGenerateContent?alt=sse`): `Authorization: Bearer` must be a token this fake issued and that
 *   has not expired by its clock (or one listed in `staticTokens`), else 401 UNAUTHENTICATED in Google's
 *   error shape. Answers come from a FIFO queue, else an echo of the last user text.
 * - `POST .../publishers/anthropic/models/{m}:rawPredict` (and `:streamRawPredict`): Claude, an
 *   Anthropic Messages body with `anthropic_version` in it, answered in Anthropic's own shape.
 * - `GET /v1beta1/publishers/google/models`: a ListPublisherModels page.
 */
import { createPublicKey, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';

export interface VertexScript {
  status?: number;
  /** JSON body. */
  json?: unknown;
  /** SSE body: raw frames, one write() each (strings or bytes). */
  frames?: (string | Buffer)[];
  /** Destroy the socket after this many frames. */
  cutAfter?: number;
  headers?: Record<string, string>;
}

export interface VertexRequest {
  method: string;
  path: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** Google's error body. */
export function googleError(code: number, status: string, message: string, details?: unknown[]): VertexScript {
  return { status: code, json: { error: { code, message, status, ...(details ? { details } : {}) } } };
}

/** SSE frames of GenerateContentResponse objects (no terminator: Vertex ends by closing). */
export function geminiSse(events: unknown[], opts: { crlf?: boolean; comments?: boolean } = {}): string[] {
  const eol = opts.crlf ? '\r\n' : '\n';
  const out: string[] = [];
  for (const e of events) {
    if (opts.comments) out.push(`: ping${eol}${eol}`);
    out.push(`data: ${JSON.stringify(e)}${eol}${eol}`);
  }
  return out;
}

/** A GenerateContentResponse with one candidate. */
export function geminiResponse(parts: unknown[], finishReason?: string, usage?: Record<string, number>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const candidate: Record<string, unknown> = { index: 0, content: { role: 'model', parts } };
  if (finishReason) candidate.finishReason = finishReason;
  return {
    candidates: [candidate],
    ...(usage ? { usageMetadata: usage } : {}),
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp-fake-1',
    createTime: '2025-01-01T00:00:00.000000Z',
    ...extra,
  };
}

const b64urlJson = (s: string): any => JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));

export class FakeVertex {
  readonly requests: VertexRequest[] = [];
  /** Token exchanges answered (successful or not). */
  exchanges = 0;
  /** Tokens accepted without an exchange (a plain access token). */
  readonly staticTokens = new Set<string>();
  private readonly queue: VertexScript[] = [];
  private readonly tokenQueue: VertexScript[] = [];
  private readonly issued = new Map<string, number>();
  private readonly publicKey: KeyObject;
  private readonly privatePem: string;
  private readonly sockets = new Set<import('node:net').Socket>();
  private tokenSeq = 0;

  private constructor(
    private readonly server: http.Server,
    readonly baseUrl: string,
    keys: { publicKey: KeyObject; privatePem: string },
    /** The fake's clock (ms): the same injected clock the gateway gets, so expiry is testable. */
    readonly now: () => number,
  ) {
    this.publicKey = keys.publicKey;
    this.privatePem = keys.privatePem;
  }

  static async start(now: () => number = Date.now): Promise<FakeVertex> {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    let self: FakeVertex | undefined;
    const server = http.createServer((req, res) => void self!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    self = new FakeVertex(server, `http://127.0.0.1:${port}`, { publicKey: createPublicKey(publicKey.export({ type: 'spki', format: 'pem' })), privatePem }, now);
    server.on('connection', (s) => {
      self!.sockets.add(s);
      s.on('close', () => self!.sockets.delete(s));
    });
    return self;
  }

  /** A service account JSON whose key this fake verifies; its token_uri is this fake. */
  serviceAccount(over: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      type: 'service_account',
      project_id: 'sa-project',
      private_key_id: 'key-1',
      private_key: this.privatePem,
      client_email: 'gateway@sa-project.iam.gserviceaccount.com',
      client_id: '1234567890',
      token_uri: `${this.baseUrl}/token`,
      ...over,
    };
  }

  enqueue(...s: VertexScript[]): void {
    this.queue.push(...s);
  }

  enqueueToken(...s: VertexScript[]): void {
    this.tokenQueue.push(...s);
  }

  reset(): void {
    this.queue.length = 0;
    this.tokenQueue.length = 0;
    this.requests.length = 0;
  }

  /** Model-endpoint requests (token exchanges excluded). */
  get calls(): VertexRequest[] {
    return this.requests.filter((r) => r.path !== '/token');
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', this.baseUrl);
    let body: any;
    try {
      body = req.headers['content-type']?.includes('application/json') ? JSON.parse(raw) : Object.fromEntries(new URLSearchParams(raw));
    } catch {
      body = undefined;
    }
    this.requests.push({ method: req.method ?? '', path: url.pathname, url: req.url ?? '', headers: req.headers, body });
    if (url.pathname === '/token' && req.method === 'POST') return this.token(req, body, res);
    if (url.pathname === '/token') return this.send(res, { status: 405, json: { error: 'invalid_request' } });

    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined;
    const expires = token === undefined ? undefined : this.issued.get(token);
    const valid = token !== undefined && (this.staticTokens.has(token) || (expires !== undefined && this.now() < expires));
    if (!valid) {
      return this.send(res, googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.'));
    }
    if (req.method === 'GET' && url.pathname === '/v1beta1/publishers/google/models') {
      return this.send(res, {
        json: {
          publisherModels: [
            { name: 'publishers/google/models/gemini-2.5-flash', versionId: '001', launchStage: 'GA' },
            { name: 'publishers/google/models/gemini-2.5-pro', versionId: '001', launchStage: 'GA' },
          ],
        },
      });
    }
    const claude = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/.exec(url.pathname);
    if (claude && req.method === 'POST') return this.send(res, this.claude(body, claude[3]!, claude[4] === 'streamRawPredict'));
    const m = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname);
    if (!m || req.method !== 'POST') return this.send(res, googleError(404, 'NOT_FOUND', `No route ${req.method} ${url.pathname}`));
    if (!Array.isArray(body?.contents) || body.contents.length === 0) {
      return this.send(res, googleError(400, 'INVALID_ARGUMENT', 'contents is not specified'));
    }
    const stream = m[4] === 'streamGenerateContent';
    if (stream && url.searchParams.get('alt') !== 'sse') {
      return this.send(res, googleError(400, 'INVALID_ARGUMENT', 'this fake only streams with alt=sse'));
    }
    const scripted = this.queue.shift();
    if (scripted) return this.send(res, scripted);
    const text = `echo: ${lastUserText(body.contents)}`;
    const usage = { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 };
    if (!stream) return this.send(res, { json: geminiResponse([{ text }], 'STOP', usage) });
    const half = Math.ceil(text.length / 2);
    return this.send(res, {
      frames: geminiSse([geminiResponse([{ text: text.slice(0, half) }]), geminiResponse([{ text: text.slice(half) }], 'STOP', usage)]),
    });
  }

  /**
   * Claude's rawPredict / streamRawPredict: an Anthropic Messages body without `model`, with
   * `anthropic_version` "vertex-2023-10-16" (else 400 as Vertex answers); the answer is Anthropic's
   * own (a message, or its SSE events), from the queue or an echo.
   */
  private claude(body: any, model: string, stream: boolean): VertexScript {
    const refuse = (message: string): VertexScript => ({ status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message } } });
    if (body?.anthropic_version !== 'vertex-2023-10-16') return refuse('anthropic_version: Input should be \'vertex-2023-10-16\'');
    if (body.model !== undefined) return refuse('model: Extra inputs are not permitted');
    if (!Number.isInteger(body.max_tokens) || !Array.isArray(body.messages)) return refuse('max_tokens, messages: Field required');
    if ((body.stream === true) !== stream) return refuse('stream must be true on streamRawPredict only');
    const scripted = this.queue.shift();
    if (scripted) return scripted;
    const last = body.messages.at(-1);
    const text = `echo: ${typeof last?.content === 'string' ? last.content : ''}`;
    const usage = { input_tokens: 8, output_tokens: 2 };
    if (!stream) {
      return { json: { id: 'msg_vrtx_fake', type: 'message', role: 'assistant', model, content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage } };
    }
    const ev = (type: string, data: Record<string, unknown> = {}): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    return {
      frames: [
        ev('message_start', { message: { id: 'msg_vrtx_fake', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 8, output_tokens: 1 } } }),
        ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
        ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
        ev('content_block_stop', { index: 0 }),
        ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } }),
        ev('message_stop'),
      ],
    };
  }

  private token(req: http.IncomingMessage, form: Record<string, string> | undefined, res: http.ServerResponse): void {
    this.exchanges++;
    const scripted = this.tokenQueue.shift();
    if (scripted) return this.send(res, scripted);
    const refuse = (description: string): void => this.send(res, { status: 400, json: { error: 'invalid_grant', error_description: description } });
    if (!req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) return refuse('Bad content type');
    if (form?.grant_type !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse('Invalid grant_type');
    const parts = String(form.assertion ?? '').split('.');
    if (parts.length !== 3) return refuse('Invalid JWT: not three parts');
    const [h, p, s] = parts as [string, string, string];
    let header: any;
    let claims: any;
    try {
      header = b64urlJson(h);
      claims = b64urlJson(p);
    } catch {
      return refuse('Invalid JWT: not base64url JSON');
    }
    if (header.alg !== 'RS256') return refuse('Invalid JWT: alg must be RS256');
    if (!verify('RSA-SHA256', Buffer.from(`${h}.${p}`), this.publicKey, Buffer.from(s, 'base64url'))) return refuse('Invalid JWT Signature.');
    const sa = this.serviceAccount();
    if (header.kid !== sa.private_key_id) return refuse('Invalid JWT: unknown kid');
    if (claims.iss !== sa.client_email) return refuse('Invalid JWT: iss');
    // aud is the token endpoint's own URL, the one this exchange was sent to.
    if (claims.aud !== `${this.baseUrl}${req.url}`) return refuse('Invalid JWT: aud');
    if (claims.scope !== CLOUD_PLATFORM) return refuse('Invalid JWT: scope');
    const nowS = Math.floor(this.now() / 1000);
    if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return refuse('Invalid JWT: iat/exp');
    if (claims.exp - claims.iat > 3600) return refuse('Invalid JWT: lifetime over 3600 s');
    if (claims.iat > nowS + 60 || claims.exp <= nowS) {
      return refuse('Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values');
    }
    const token = `ya29.fake-${++this.tokenSeq}`;
    this.issued.set(token, this.now() + 3599_000);
    this.send(res, { json: { access_token: token, expires_in: 3599, token_type: 'Bearer' } });
  }

  private send(res: http.ServerResponse, s: VertexScript): void {
    if (s.frames) {
      res.writeHead(s.status ?? 200, { 'content-type': 'text/event-stream', ...s.headers });
      let i = 0;
      const next = (): void => {
        if (s.cutAfter !== undefined && i >= s.cutAfter) {
          res.socket?.destroy();
          return;
        }
        if (i >= s.frames!.length) {
          res.end();
          return;
        }
        res.write(s.frames![i++], () => setImmediate(next));
      };
      next();
      return;
    }
    const text = JSON.stringify(s.json ?? {});
    res.writeHead(s.status ?? 200, { 'content-type': 'application/json; charset=UTF-8', ...s.headers });
    res.end(text);
  }
}

function lastUserText(contents: any[]): string {
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i];
    if (c?.role !== 'user') continue;
    const t = (c.parts ?? []).map((p: any) => p?.text ?? '').join('');
    if (t !== '') return t;
  }
  return '';
}
