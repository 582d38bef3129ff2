import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny OpenAI-compatible provider for `sluice quickstart`: a deterministic echo on 127.0.0.1, so the
 * gateway can be tried with no provider account. Chat completions (JSON and SSE, with the usage chunk
 * when `stream_options.include_usage` asks for it), tool calls, legacy completions, embeddings (float
 * or base64) and models. Not a test double: it has no scripting; test/fakes/ has those. Never imported
 * by `sluice serve`.
 */
export const DEMO_MODELS = ['gpt-4o', 'gpt-4o-mini', 'gpt-3.5-turbo-instruct', 'text-embedding-3-small'];

const tokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

type Message = { role?: string; content?: unknown };

function textOf(m: Message | undefined): string {
  if (typeof m?.content === 'string') return m.content;
  if (Array.isArray(m?.content)) return m.content.map((p: { text?: string }) => p.text ?? '').join('');
  return '';
}

const messagesOf = (body: Record<string, unknown>): Message[] => (Array.isArray(body.messages) ? (body.messages as Message[]) : []);

function lastUserText(body: Record<string, unknown>): string {
  return textOf([...messagesOf(body)].reverse().find((x) => x.role === 'user'));
}

/** A unit vector that depends only on the text (8 dimensions). */
export function echoEmbedding(text: string): number[] {
  const v = new Array<number>(8).fill(0);
  for (let i = 0; i < text.length; i++) v[i % 8]! += ((text.charCodeAt(i) * 31 + i) % 97) / 97 - 0.5;
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

type Schema = {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  properties?: Record<string, Schema>;
  required?: string[];
};

/**
 * A value that fits `schema`, the same every time: its const, first enum value or default; else an
 * object of its required properties, the prompt for a string, the minimum (or 0) for a number, false,
 * an empty array. So a client's tool loop gets arguments its own validation accepts.
 */
export function exampleOf(schema: Schema | undefined, text: string, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > 16) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const type = Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? (schema.properties ? 'object' : undefined));
  switch (type) {
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((k) => [k, exampleOf(schema.properties?.[k], text, depth + 1)]));
    case 'string':
      return text;
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    default:
      return null;
  }
}

type Tool = { type?: string; function?: { name?: string; parameters?: Schema } };

/**
 * The tool call this request gets, if any: when `tools` are given, `tool_choice` is not "none" and the
 * last message is not already a tool's result, the tool `tool_choice` names (else the first) is called
 * with arguments built from its schema. After a tool result, the answer is text, so a loop ends.
 */
function toolCallFor(body: Record<string, unknown>, prompt: string): { id: string; name: string; arguments: string } | undefined {
  const tools = (Array.isArray(body.tools) ? (body.tools as Tool[]) : []).filter((t) => typeof t?.function?.name === 'string');
  if (tools.length === 0 || body.tool_choice === 'none' || messagesOf(body).at(-1)?.role === 'tool') return undefined;
  const named = (body.tool_choice as { function?: { name?: string } } | undefined)?.function?.name;
  const tool = tools.find((t) => t.function!.name === named) ?? tools[0]!;
  return { id: 'call_demo_0', name: tool.function!.name!, arguments: JSON.stringify(exampleOf(tool.function!.parameters ?? { type: 'object' }, prompt)) };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-demo-${Date.now()}` });
  res.end(JSON.stringify(body));
}

/** Write an SSE answer: each chunk as a `data:` event, then the usage chunk when asked for, then [DONE]. */
function sendStream(res: ServerResponse, body: Record<string, unknown>, chunks: object[], usageChunk: object): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage) res.write(`data: ${JSON.stringify(usageChunk)}\n\n`);
  res.end('data: [DONE]\n\n');
}

const usageOf = (prompt: string, answer: string) => ({
  prompt_tokens: tokens(prompt),
  completion_tokens: tokens(answer),
  total_tokens: tokens(prompt) + tokens(answer),
});

function chat(body: Record<string, unknown>, res: ServerResponse): void {
  const prompt = lastUserText(body);
  const call = toolCallFor(body, prompt);
  const last = messagesOf(body).at(-1);
  const content = `echo: ${last?.role === 'tool' ? textOf(last) : prompt}`;
  const model = typeof body.model === 'string' ? body.model : 'gpt-4o-mini';
  const id = `chatcmpl-demo-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = usageOf(prompt, call ? call.arguments : content);
  const toolCall = call && { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
  const finish = call ? 'tool_calls' : 'stop';
  if (body.stream !== true) {
    const message = call ? { role: 'assistant', content: null, tool_calls: [toolCall] } : { role: 'assistant', content };
    send(res, 200, { id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage });
    return;
  }
  const chunk = (choices: unknown[], extra: object = {}) => ({ id, object: 'chat.completion.chunk', created, model, choices, ...extra });
  const deltas = call
    ? [
        { role: 'assistant', content: null, tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] },
        { tool_calls: [{ index: 0, function: { arguments: call.arguments } }] },
      ]
    : [{ role: 'assistant', content: '' }, ...content.split(/(?<= )/).map((piece) => ({ content: piece }))];
  sendStream(
    res,
    body,
    [...deltas.map((delta) => chunk([{ index: 0, delta, finish_reason: null }])), chunk([{ index: 0, delta: {}, finish_reason: finish }])],
    chunk([], { usage }),
  );
}

/** POST /v1/completions (legacy): one echo choice per prompt. */
function completions(body: Record<string, unknown>, res: ServerResponse): void {
  const prompts = Array.isArray(body.prompt) && body.prompt.every((p) => typeof p === 'string') ? (body.prompt as string[]) : [typeof body.prompt === 'string' ? body.prompt : ''];
  const model = typeof body.model === 'string' ? body.model : 'gpt-3.5-turbo-instruct';
  const id = `cmpl-demo-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const texts = prompts.map((p) => `echo: ${p}`);
  const usage = usageOf(prompts.join(''), texts.join(''));
  if (body.stream !== true) {
    const choices = texts.map((text, index) => ({ text, index, logprobs: null, finish_reason: 'stop' }));
    send(res, 200, { id, object: 'text_completion', created, model, choices, usage });
    return;
  }
  const chunk = (choices: unknown[], extra: object = {}) => ({ id, object: 'text_completion', created, model, choices, ...extra });
  const chunks = texts.flatMap((text, index) => [
    ...text.split(/(?<= )/).map((piece) => chunk([{ text: piece, index, logprobs: null, finish_reason: null }])),
    chunk([{ text: '', index, logprobs: null, finish_reason: 'stop' }]),
  ]);
  sendStream(res, body, chunks, chunk([], { usage }));
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
    else if (req.method === 'POST' && path === '/v1/completions') completions(body, res);
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
