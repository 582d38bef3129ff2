import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny OpenAI-compatible provider for `sluice quickstart`: a deterministic echo on 127.0.0.1, so the
 * gateway can be tried with no provider account. Chat completions (JSON and SSE, with the usage chunk
 * when `stream_options.include_usage` asks for it), embeddings (float or base64) and models. Not a
 * test double: it has no scripting; test/fakes/ has those. Never imported by `sluice serve`.
 */
export const DEMO_MODELS = ['gpt-4o', 'gpt-4o-mini', 'text-embedding-3-small'];

const tokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

function lastUserText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? (body.messages as { role?: string; content?: unknown }[]) : [];
  const m = [...messages].reverse().find((x) => x.role === 'user');
  if (typeof m?.content === 'string') return m.content;
  if (Array.isArray(m?.content)) return m.content.map((p: { text?: string }) => p.text ?? '').join('');
  return '';
}

/** A unit vector that depends only on the text (8 dimensions). */
export function echoEmbedding(text: string): number[] {
  const v = new Array<number>(8).fill(0);
  for (let i = 0; i < text.length; i++) v[i % 8]! += ((text.charCodeAt(i) * 31 + i) % 97) / 97 - 0.5;
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-demo-${Date.now()}` });
  res.end(JSON.stringify(body));
}

function chat(body: Record<string, unknown>, res: ServerResponse): void {
  const prompt = lastUserText(body);
  const content = `echo: ${prompt}`;
  const model = typeof body.model === 'string' ? body.model : 'gpt-4o-mini';
  const id = `chatcmpl-demo-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: tokens(prompt), completion_tokens: tokens(content), total_tokens: tokens(prompt) + tokens(content) };
  if (body.stream !== true) {
    send(res, 200, {
      id, object: 'chat.completion', created, model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage,
    });
    return;
  }
  const chunk = (choices: unknown[], extra: object = {}): string =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
  for (const piece of content.split(/(?<= )/)) res.write(chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]));
  res.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
  if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage) res.write(chunk([], { usage }));
  res.end('data: [DONE]\n\n');
}

function embeddings(body: Record<string, unknown>, res: ServerResponse): void {
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const base64 = body.encoding_format === 'base64';
  const data = inputs.map((input, index) => {
    const v = echoEmbedding(typeof input === 'string' ? input : JSON.stringify(input));
    return { object: 'embedding', index, embedding: base64 ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v };
  });
  const n = inputs.reduce<number>((s, x) => s + tokens(String(x)), 0);
  send(res, 200, { object: 'list', data, model: body.model ?? 'text-embedding-3-small', usage: { prompt_tokens: n, total_tokens: n } });
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === '/v1/models') {
    send(res, 200, { object: 'list', data: DEMO_MODELS.map((id) => ({ id, object: 'model', created: 0, owned_by: 'sluice-demo' })) });
    return;
  }
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (d: string) => (text += d));
  req.on('end', () => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      send(res, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') chat(body, res);
    else if (req.method === 'POST' && path === '/v1/embeddings') embeddings(body, res);
    else send(res, 404, { error: { message: `the demo provider does not serve ${req.method} ${path}`, type: 'invalid_request_error', param: null, code: null } });
  });
}

/** Start the echo provider on 127.0.0.1 on a free port. */
export async function startFakeProvider(): Promise<{ baseUrl: string; server: Server; close: () => Promise<void> }> {
  const server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
