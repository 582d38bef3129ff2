/**
 * Bounded work per request, end to end against a real gateway process (its event loop is not the
 * test's, so `/health` answering while a request is in flight shows the loop is free):
 *
 * - config regexes (regexMatch, conditional $regex, jsonSchema pattern) on inputs that take a
 *   backtracking engine hours: the request reaches the provider and `/health` answers meanwhile;
 * - prompt templates that multiply (nested sections over 20-item lists): 400 template_too_large;
 * - JSON nested 5,000 deep in a body, the config header and a management body: 400 json_too_deep;
 * - provider answers over --upstream-max-body / --upstream-max-event (a 64 MB JSON answer, a 64 MB SSE
 *   line without a newline): 502 upstream_response_too_large, and the provider sees its connection
 *   closed long before it has sent everything.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, post, type Answer } from '../helpers/http.js';
import { GatewayProcess } from '../scale/_process.js';

const KEY = 'sk-bounded-work-gateway-key-0123456789';
const EVIL_A = `${'a'.repeat(48)}!`;

/** A loopback provider that records each request and answers it only when told to. */
class HoldingProvider {
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => (body += b.toString('utf8')));
    req.on('end', () => {
      const waiter = this.waiters.shift();
      this.held.push({ body, res });
      waiter?.();
    });
  });
  private readonly held: { body: string; res: http.ServerResponse }[] = [];
  private waiters: (() => void)[] = [];
  url = '';

  async start(): Promise<this> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  /** Resolves when a request has arrived (and is being held). */
  arrived(): Promise<void> {
    return this.held.length > 0 ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }

  /** Answers every held request with a chat completion saying `content`. */
  release(content = 'ok'): void {
    for (const { res } of this.held.splice(0)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'gpt-4o-mini',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

/** A loopback provider that answers with up to `total` bytes and records how its answer ended. */
class FloodingProvider {
  sent = 0;
  /** Resolves with true when the client closed the connection before the whole answer was written. */
  ended!: Promise<boolean>;
  private readonly server: http.Server;
  url = '';

  /** `before`: whole SSE events sent before the flood (a stream already under way). */
  constructor(kind: 'json' | 'sse', total: number, before = '') {
    this.server = http.createServer((req, res) => {
      req.resume();
      let finished = false;
      this.ended = new Promise((resolve) => {
        res.on('close', () => resolve(!finished));
      });
      res.writeHead(200, { 'content-type': kind === 'json' ? 'application/json' : 'text/event-stream' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const head = kind === 'json' ? '{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"' : 'data: {"x":"';
      res.write(before + head);
      const pump = (): void => {
        while (this.sent < total && !res.destroyed) {
          this.sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) {
          finished = true;
          res.end(kind === 'json' ? '"}}]}' : '"}\n\n');
        }
      };
      pump();
    });
  }

  async start(): Promise<this> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

/** Six nested sections, each over a 20-item list: 64 million passes unbounded. */
const NESTED = '{{#a}}{{#b}}{{#c}}{{#d}}{{#e}}{{#f}}x{{/f}}{{/e}}{{/d}}{{/c}}{{/b}}{{/a}}';
const twenty = Array.from({ length: 20 }, (_, i) => i);

let gw: GatewayProcess;
let url: string;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-bounded-'));
  const bootstrap = join(dir, 'bootstrap.yaml');
  writeFileSync(
    bootstrap,
    `api_keys:
  - { key: ${KEY}-ws, name: bounded, workspace_id: ws-bounded }
prompts:
  - name: Nested
    workspace_id: ws-bounded
    model: gpt-4o-mini
    messages:
      - { role: user, content: "${NESTED}" }
  - name: Wide
    workspace_id: ws-bounded
    model: gpt-4o-mini
    messages:
      - { role: user, content: "{{#rows}}{{#cols}}{{cell}}{{/cols}}{{/rows}}" }
`,
  );
  gw = GatewayProcess.serve(['--port', '0', '--bootstrap', bootstrap, '--upstream-max-body', '1mb', '--upstream-max-event', '64kb'], {
    GATEWAY_API_KEYS: KEY,
  });
  const [line] = await gw.listening();
  url = `http://127.0.0.1:${line!.port}`;
}, 30_000);

afterAll(async () => {
  await gw?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const headers = (config: unknown, key = KEY): Record<string, string> => ({
  'x-gateway-api-key': key,
  'content-type': 'application/json',
  'x-gateway-config': JSON.stringify(config),
});
const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });
const target = (base: string, extra: Record<string, unknown> = {}) => ({ provider: 'openai', custom_host: base, api_key: 'sk-provider-bounded', ...extra });

/**
 * Sends `body`, waits until the provider holds it (the gateway's own work on it is done), asks
 * `/health` while it is still in flight, then lets the provider answer.
 */
async function inFlight(config: unknown, body: unknown, provider: HoldingProvider): Promise<{ answer: Answer; health: number }> {
  const pending = post(`${url}/v1/chat/completions`, headers(config), body);
  await provider.arrived();
  const health = (await get(`${url}/health`)).status;
  provider.release();
  return { answer: await pending, health };
}

describe('config regexes run in linear time', () => {
  let provider: HoldingProvider;
  beforeAll(async () => {
    provider = await new HoldingProvider().start();
  });
  afterAll(() => provider?.close());

  for (const rule of ['^(a+)+$', '(a|aa)+$', '^(a|a?)+$', '(.*a){12}$']) {
    it(`regexMatch ${rule} on ${EVIL_A.length} characters: the request goes on, /health answers while it is in flight`, async () => {
      const config = { ...target(provider.url), input_guardrails: [{ id: 'evil', 'default.regexMatch': { rule }, deny: false }] };
      const { answer, health } = await inFlight(config, chat(EVIL_A), provider);
      expect(health).toBe(200);
      expect(answer.status).toBe(246); // a failed guardrail without deny: the answer, flagged
      expect(answer.json.hook_results.before_request_hooks[0].checks[0]).toMatchObject({ id: 'default.regexMatch', verdict: false, error: null });
    });
  }

  it('a conditional $regex routes by an evil pattern without stalling', async () => {
    const config = {
      strategy: { mode: 'conditional', conditions: [{ query: { 'params.user': { $regex: '^(a+)+$' } }, then: 'never' }], default: 'held' },
      targets: [target('http://127.0.0.1:9/v1', { name: 'never' }), target(provider.url, { name: 'held' })],
    };
    const { answer, health } = await inFlight(config, chat('hi', { user: EVIL_A }), provider);
    expect(health).toBe(200);
    expect(answer.status).toBe(200);
  });

  it('a jsonSchema pattern runs on RE2 too', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } } };
    const config = { ...target(provider.url), input_guardrails: [{ id: 'schema', 'default.jsonSchema': { schema }, deny: false }] };
    const { answer, health } = await inFlight(config, chat(JSON.stringify({ name: EVIL_A })), provider);
    expect(health).toBe(200);
    expect(answer.status).toBe(246);
    expect(answer.json.hook_results.before_request_hooks[0].checks[0]).toMatchObject({ id: 'default.jsonSchema', verdict: false });
  });

  it('a pattern RE2 cannot express (backreference, lookaround) is a 400 naming its path', async () => {
    for (const rule of ['(a)\\1', 'a(?=b)', '(?<!x)y']) {
      const config = { ...target(provider.url), input_guardrails: [{ id: 'bad', 'default.regexMatch': { rule } }] };
      const r = await post(`${url}/v1/chat/completions`, headers(config), chat('x'));
      expect(r.status, rule).toBe(400);
      expect(r.json.error.code).toBe('invalid_config');
      expect(r.json.error.message).toContain('rule');
      expect(r.json.error.message).toContain('RE2');
    }
    const cond = {
      strategy: { mode: 'conditional', conditions: [{ query: { 'params.user': { $regex: '(a)\\1' } }, then: 'x' }], default: 'x' },
      targets: [target(provider.url, { name: 'x' })],
    };
    const r = await post(`${url}/v1/chat/completions`, headers(cond), chat('x'));
    expect(r.status).toBe(400);
    expect(r.json.error.param).toContain('$regex');
    const stored = await post(`${url}/v1/guardrails`, { 'x-gateway-api-key': `${KEY}-ws`, 'content-type': 'application/json' }, {
      name: 'backref',
      checks: [{ id: 'default.regexMatch', parameters: { rule: '(a)\\1' } }],
      actions: { onFail: 'block' },
    });
    expect(stored.status).toBe(400);
    expect(stored.json.error.param).toContain('checks');
    expect(stored.json.error.param).toBe('checks[0].parameters');
    expect(JSON.stringify(stored.json.issues)).toContain('rule');
  });
});

describe('prompt templates are bounded', () => {
  const promptHeaders = (prompt: string) => headers({ ...target('http://127.0.0.1:9/v1'), prompt_id: prompt }, `${KEY}-ws`);

  it('six nested sections over 20-item lists: 400 template_too_large naming the prompt and variable; /health answers', async () => {
    const vars = { a: twenty, b: twenty, c: twenty, d: twenty, e: twenty, f: twenty };
    const [r, health] = await Promise.all([
      post(`${url}/v1/chat/completions`, promptHeaders('nested'), { variables: vars }),
      get(`${url}/health`),
    ]);
    expect(health.status).toBe(200);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('template_too_large');
    expect(r.json.error.message).toContain('"nested"');
    expect(r.json.error.param).toMatch(/^variables\.[a-f]$/);
  });

  it('a small request cannot render a body of many megabytes (the output cap)', async () => {
    const cell = 'z'.repeat(4000);
    const cols = Array.from({ length: 20 }, () => ({ cell }));
    const rows = Array.from({ length: 20 }, () => ({}));
    const r = await post(`${url}/v1/chat/completions`, promptHeaders('wide'), { variables: { rows, cols } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'template_too_large', param: 'variables.cell' });
    expect(r.json.error.message).toContain('--template-max-output');
  });
});

describe('JSON depth is capped at parse', () => {
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

  it('a request body 5,000 deep is a 400 json_too_deep, not a 500', async () => {
    const body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"metadata":${deep(5000)}}`;
    const r = await post(`${url}/v1/chat/completions`, headers(target('http://127.0.0.1:9/v1')), body);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('json_too_deep');
  });

  it('the config header 5,000 deep is a 400 naming the header', async () => {
    const r = await post(
      `${url}/v1/chat/completions`,
      { 'x-gateway-api-key': KEY, 'content-type': 'application/json', 'x-gateway-config': `{"provider":"openai","x":${deep(5000)}}` },
      chat('x'),
    );
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'json_too_deep', param: 'x-gateway-config' });
  });

  it('a management body 5,000 deep is a 400 too', async () => {
    const r = await post(`${url}/v1/guardrails`, { 'x-gateway-api-key': `${KEY}-ws`, 'content-type': 'application/json' }, `{"name":"x","checks":${deep(5000)}}`);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('json_too_deep');
  });

  it('nesting under the cap is read as before', async () => {
    const r = await post(`${url}/v1/guardrails`, { 'x-gateway-api-key': `${KEY}-ws`, 'content-type': 'application/json' }, `{"name":"x","checks":${deep(100)}}`);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_request_body');
  });
});

describe('provider answers are capped', () => {
  const SIXTY_FOUR_MB = 64 * 1024 * 1024;

  it.each([
    ['a 64 MB JSON answer over --upstream-max-body 1mb', 'json', false],
    ['a 64 MB SSE line without a newline over --upstream-max-event 64kb', 'sse', true],
  ] as const)('%s: 502 upstream_response_too_large, the call aborted', async (_name, kind, stream) => {
    const flood = await new FloodingProvider(kind, SIXTY_FOUR_MB).start();
    try {
      const r = await post(`${url}/v1/chat/completions`, headers(target(flood.url)), stream ? chat('x', { stream: true }) : chat('x'));
      expect(r.status).toBe(502);
      expect(r.json.error.code).toBe('upstream_response_too_large');
      expect(await flood.ended).toBe(true);
      expect(flood.sent).toBeLessThan(SIXTY_FOUR_MB);
    } finally {
      await flood.close();
    }
  });

  it('a stream already under way ends with an error event carrying upstream_response_too_large', async () => {
    const chunk = (content: string) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
    const flood = await new FloodingProvider('sse', SIXTY_FOUR_MB, chunk('Hel') + chunk('lo')).start();
    try {
      const r = await post(`${url}/v1/chat/completions`, headers(target(flood.url)), chat('x', { stream: true }));
      expect(r.status).toBe(200);
      expect(r.text).toContain('"Hel"');
      expect(r.text).toMatch(/event: error\ndata: .*"code":"upstream_response_too_large"/);
      expect(await flood.ended).toBe(true);
    } finally {
      await flood.close();
    }
  });
});
