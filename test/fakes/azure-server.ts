/**
 * A fake of Azure OpenAI and of an Azure AI Foundry (model inference) endpoint, written from Azure's
 * API reference, not from the gateway's translator: a real `node:http`
 * server on 127.0.0.1:0 that checks credentials, the deployment path and the `api-version` query as
 * the service does, and answers in Azure's shape (prompt-filter first chunk with `choices: []`,
 * `content_filter_results` per choice, `prompt_filter_results`).
 *
 * Azure OpenAI: `POST /openai/deployments/{deployment}/{chat/completions|completions|embeddings}?api-version=`,
 * `GET /openai/models?api-version=`; `api-key: <key>`, or `Authorization: Bearer <Entra ID token>`.
 * AI Foundry: `POST /chat/completions`, `POST /v1/chat/completions`, `POST /embeddings`, `GET /info`;
 * `Authorization: Bearer <endpoint key>`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AzureScript {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  /** An SSE body written as these frames, one write each (status 200, text/event-stream). */
  frames?: (string | Buffer)[];
}

export interface AzureRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface FakeAzureOptions {
  apiKey: string;
  /** An Entra ID access token accepted as `Authorization: Bearer` (Azure OpenAI). */
  entraToken?: string;
  /** Deployment name → the model it runs. */
  deployments: Record<string, string>;
  /** api-versions the service knows; others are a 400. */
  apiVersions?: readonly string[];
}

const DEFAULT_VERSIONS = ['2024-02-01', '2024-06-01', '2024-09-01-preview', '2024-10-21', '2025-04-01-preview'];
const SAFE = { filtered: false, severity: 'safe' };
export const FILTERS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };
export const PROMPT_FILTER = [{ prompt_index: 0, content_filter_results: { ...FILTERS, jailbreak: { filtered: false, detected: false } } }];

const err = (status: number, code: string, message: string, extra: Record<string, unknown> = {}): AzureScript => ({
  status,
  json: { error: { code, message, ...extra } },
});

/** SSE frames of Azure chat chunks, then `data: [DONE]`. */
export function azureFrames(chunks: unknown[]): string[] {
  return [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), 'data: [DONE]\n\n'];
}

/** The prompt-filter first chunk of an Azure stream: empty id, model and object, no choices. */
export const promptFilterChunk = { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTER };

function lastUserText(body: any): string {
  const msgs = Array.isArray(body?.messages) ? body.messages : [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m?.role === 'user') return typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
  }
  return '';
}

/** A float vector derived from the text (deterministic), as Azure returns for embeddings. */
export function azureEmbedding(text: string, dims = 3): number[] {
  const out: number[] = [];
  for (let i = 0; i < dims; i++) out.push(Math.fround(((text.length + i * 7) % 13) / 13 - 0.5));
  return out;
}

export class FakeAzure {
  readonly requests: AzureRequest[] = [];
  private readonly queue: AzureScript[] = [];
  private readonly server: http.Server;
  private counter = 0;
  origin = '';

  private constructor(private readonly opts: FakeAzureOptions) {
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  static async start(opts: FakeAzureOptions): Promise<FakeAzure> {
    const f = new FakeAzure(opts);
    await new Promise<void>((resolve) => f.server.listen(0, '127.0.0.1', resolve));
    f.origin = `http://127.0.0.1:${(f.server.address() as AddressInfo).port}`;
    return f;
  }

  /** The next request (whatever its path) gets this answer, after the credential check. */
  enqueue(s: AzureScript): void {
    this.queue.push(s);
  }

  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const raw = Buffer.concat(parts).toString('utf8');
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      const r: AzureRequest = { method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body };
      this.requests.push(r);
      this.send(res, url.pathname.startsWith('/openai/') ? this.azureOpenAI(r) : this.foundry(r));
    });
  }

  private send(res: http.ServerResponse, s: AzureScript): void {
    const headers = { 'apim-request-id': `apim-${++this.counter}`, 'x-ms-region': 'East US', ...s.headers };
    if (s.frames) {
      res.writeHead(s.status ?? 200, { 'content-type': 'text/event-stream; charset=utf-8', ...headers });
      for (const f of s.frames) res.write(f);
      res.end();
      return;
    }
    res.writeHead(s.status ?? 200, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(s.json ?? {}));
  }

  private azureOpenAI(r: AzureRequest): AzureScript {
    const key = r.headers['api-key'];
    const bearer = r.headers.authorization;
    const keyOk = key === this.opts.apiKey;
    const tokenOk = this.opts.entraToken !== undefined && bearer === `Bearer ${this.opts.entraToken}`;
    if (!keyOk && !tokenOk) {
      return err(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.');
    }
    const version = r.query.get('api-version');
    if (!version) return err(404, '404', 'Resource not found');
    if (!(this.opts.apiVersions ?? DEFAULT_VERSIONS).includes(version)) return err(400, 'BadRequest', 'API version not supported');
    const scripted = this.queue.shift();
    if (scripted) return scripted;
    if (r.method === 'GET' && r.path === '/openai/models') {
      const data = [...new Set(Object.values(this.opts.deployments))].map((id) => ({
        id,
        object: 'model',
        created_at: 1715558400,
        status: 'succeeded',
        capabilities: { chat_completion: true, completion: false, embeddings: false, fine_tune: false, inference: true },
        lifecycle_status: 'generally-available',
      }));
      return { json: { data, object: 'list' } };
    }
    const m = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|completions|embeddings)$/.exec(r.path);
    if (!m || r.method !== 'POST') return err(404, '404', 'Resource not found');
    const deployment = decodeURIComponent(m[1]!);
    const model = this.opts.deployments[deployment];
    if (model === undefined) {
      return err(404, 'DeploymentNotFound', 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.');
    }
    if (r.body?.stream_options !== undefined && version < '2024-09-01') {
      return { status: 400, json: { error: { message: 'Unrecognized request argument supplied: stream_options', type: 'invalid_request_error', param: null, code: null } } };
    }
    if (m[2] === 'embeddings') return this.embeddings(r, model);
    if (m[2] === 'completions') return this.completions(r, model);
    return this.chat(r, model);
  }

  private foundry(r: AzureRequest): AzureScript {
    if (r.headers.authorization !== `Bearer ${this.opts.apiKey}`) {
      return err(401, 'Unauthorized', 'Access denied due to invalid subscription key or wrong API endpoint.');
    }
    const scripted = this.queue.shift();
    if (scripted) return scripted;
    const model = Object.values(this.opts.deployments)[0] ?? 'unknown';
    if (r.method === 'GET' && r.path === '/info') return { json: { model_name: model, model_type: 'chat-completion', model_provider_name: 'Mistral' } };
    if (r.method === 'POST' && (r.path === '/chat/completions' || r.path === '/v1/chat/completions')) return this.chat(r, model);
    if (r.method === 'POST' && r.path === '/embeddings') return this.embeddings(r, model);
    return err(404, 'NotFound', 'Resource not found');
  }

  private chat(r: AzureRequest, model: string): AzureScript {
    const id = `chatcmpl-az${++this.counter}`;
    const created = 1735689600;
    const text = lastUserText(r.body);
    const wantsTool = Array.isArray(r.body?.tools) && r.body.tools.length > 0 && /weather/i.test(text);
    const usage = { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 };
    const call = { id: 'call_az1', type: 'function', function: { name: r.body?.tools?.[0]?.function?.name ?? 'f', arguments: '{"city":"Zürich"}' } };
    if (!r.body?.stream) {
      const message = wantsTool ? { role: 'assistant', content: null, tool_calls: [call] } : { role: 'assistant', content: `echo: ${text}` };
      return {
        json: {
          id,
          object: 'chat.completion',
          created,
          model,
          system_fingerprint: 'fp_az',
          prompt_filter_results: PROMPT_FILTER,
          choices: [{ index: 0, message, logprobs: null, finish_reason: wantsTool ? 'tool_calls' : 'stop', content_filter_results: wantsTool ? {} : FILTERS }],
          usage,
        },
      };
    }
    const base = { id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_az' };
    const choice = (delta: unknown, finish: string | null, filters: unknown = {}) => ({ index: 0, delta, logprobs: null, finish_reason: finish, content_filter_results: filters });
    const chunks: unknown[] = [promptFilterChunk, { ...base, choices: [choice({ role: 'assistant', content: '' }, null)] }];
    if (wantsTool) {
      chunks.push({ ...base, choices: [choice({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }, null)] });
      chunks.push({ ...base, choices: [choice({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, null)] });
      chunks.push({ ...base, choices: [choice({ tool_calls: [{ index: 0, function: { arguments: '"Zürich"}' } }] }, null)] });
      chunks.push({ ...base, choices: [choice({}, 'tool_calls')] });
    } else {
      for (const piece of ['echo: ', text]) chunks.push({ ...base, choices: [choice({ content: piece }, null, FILTERS)] });
      chunks.push({ ...base, choices: [choice({}, 'stop')] });
    }
    if (r.body?.stream_options?.include_usage === true) chunks.push({ ...base, choices: [], usage });
    return { frames: azureFrames(chunks) };
  }

  private completions(r: AzureRequest, model: string): AzureScript {
    const prompt = String(r.body?.prompt ?? '');
    return {
      json: {
        id: `cmpl-az${++this.counter}`,
        object: 'text_completion',
        created: 1735689600,
        model,
        prompt_filter_results: PROMPT_FILTER,
        choices: [{ text: `echo: ${prompt}`, index: 0, logprobs: null, finish_reason: 'stop', content_filter_results: FILTERS }],
        usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
      },
    };
  }

  private embeddings(r: AzureRequest, model: string): AzureScript {
    const inputs: string[] = Array.isArray(r.body?.input) ? r.body.input : [String(r.body?.input ?? '')];
    const base64 = r.body?.encoding_format === 'base64';
    const data = inputs.map((t, index) => {
      const v = azureEmbedding(t);
      const embedding = base64 ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
      return { object: 'embedding', index, embedding };
    });
    return { json: { object: 'list', data, model, usage: { prompt_tokens: inputs.length, total_tokens: inputs.length } } };
  }
}
