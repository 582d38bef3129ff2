/**
 * `sluice quickstart` end to end: a real child process (from the sources, through tsx) that starts
 * the built-in echo provider and the gateway with pipelines/bootstrap.example.yaml. Every saved config
 * in pipelines/ is called through it, and the curl commands it prints are run as printed.
 */
import { execFile, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { request } from 'undici';
import { GatewayProcess, ROOT } from '../scale/_process.js';
import { parseSse } from '../helpers/sse.js';

const SAVED = readdirSync(join(ROOT, 'pipelines'))
  .filter((f) => f.endsWith('.json'))
  .map((f) => f.slice(0, -'.json'.length));
const curlFound = spawnSync('curl', ['--version']).status === 0;

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = net.createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => res(port));
    });
  });
}

let qs: GatewayProcess;
let url: string;
let key: string;

beforeAll(async () => {
  const port = await freePort();
  // No flags but the port (the default 8787 may be taken on a test machine), no provider key in the env.
  qs = GatewayProcess.node(['--import', 'tsx', join(ROOT, 'src', 'main.ts'), 'quickstart', '--port', String(port)], {
    OPENAI_API_KEY: '',
    OPENAI_BASE_URL: '',
    SLUICE_KEY: '',
  });
  await qs.waitFor('the quickstart banner', () => (qs.stdout.includes('Ctrl-C stops') ? true : undefined), 20_000);
  url = `http://127.0.0.1:${port}`;
  key = /Gateway key for this run: (\S+)/.exec(qs.stdout)![1]!;
}, 30_000);

afterAll(async () => {
  if (!qs) return;
  const exit = await qs.stop(5000);
  expect(exit).toEqual({ code: 0, signal: null });
});

const headers = (extra: Record<string, string>) => ({ 'x-gateway-api-key': key, 'content-type': 'application/json', ...extra });

describe('sluice quickstart', () => {
  it('prints where it listens, the echo provider on 127.0.0.1, and the saved configs to try', () => {
    expect(qs.stdout).toContain(`the gateway listens on ${url}`);
    expect(qs.stdout).toMatch(/echo provider at http:\/\/127\.0\.0\.1:\d+\/v1/);
    expect(qs.stdout).toContain('x-gateway-config: fallback');
    for (const id of SAVED) expect(qs.stdout).toContain(id);
  });

  it.each(SAVED)('the saved config %s answers through it', async (id) => {
    const res = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: headers({ 'x-gateway-config': id }),
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: `hi ${id}` }] }),
    });
    const body = (await res.body.json()) as any;
    expect(res.statusCode, JSON.stringify(body)).toBe(200);
    expect(body.choices[0].message.content).toBe(`echo: hi ${id}`);
    expect(res.headers['x-gateway-target']).toMatch(/^config\.targets\[\d\]|^config$/);
  });

  it('streams SSE through a saved config, ending in [DONE]', async () => {
    const res = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: headers({ 'x-gateway-config': 'race' }),
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three' }], stream: true }),
    });
    expect(res.statusCode).toBe(200);
    const frames = parseSse(await res.body.text());
    expect(frames.at(-1)?.data).toBe('[DONE]');
    const text = frames
      .filter((f) => f.data !== '[DONE]')
      .map((f) => JSON.parse(f.data).choices[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe('echo: one two three');
  });

  it('serves embeddings and models with a virtual key of the example bootstrap', async () => {
    const emb = await request(`${url}/v1/embeddings`, {
      method: 'POST',
      headers: headers({ 'x-gateway-virtual-key': 'openai-backup' }),
      body: JSON.stringify({ model: 'text-embedding-3-small', input: ['a', 'b'] }),
    });
    const e = (await emb.body.json()) as any;
    expect(emb.statusCode).toBe(200);
    expect(e.data).toHaveLength(2);
    expect(e.data[0].embedding).toHaveLength(8);
    const models = await request(`${url}/v1/models`, { headers: headers({ 'x-gateway-virtual-key': 'openai-primary' }) });
    const m = (await models.body.json()) as any;
    expect(models.statusCode).toBe(200);
    expect(m.data.map((x: { id: string }) => x.id)).toContain('gpt-4o-mini');
  });

  describe('through the openai SDK', () => {
    const client = () =>
      new OpenAI({
        apiKey: 'unused-the-virtual-key-holds-it',
        baseURL: `${url}/v1`,
        maxRetries: 0,
        timeout: 10_000,
        defaultHeaders: { 'x-gateway-api-key': key, 'x-gateway-virtual-key': 'openai-primary' },
      });
    const weather = {
      type: 'function' as const,
      function: {
        name: 'get_weather',
        parameters: {
          type: 'object',
          properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer', minimum: 1 }, note: { type: 'string' } },
          required: ['city', 'unit', 'days'],
        },
      },
    };
    const clock = { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: {} } } };

    it('a request with tools gets a call of the first tool, its arguments built from the required fields of its schema; the result comes back as text', async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Paris' }];
      const first = await client().chat.completions.create({ model: 'gpt-4o-mini', messages, tools: [weather, clock] });
      expect(first.choices[0]!.finish_reason).toBe('tool_calls');
      const call = first.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(call.function.name).toBe('get_weather');
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', unit: 'celsius', days: 1 });

      messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '18 degrees, sunny' });
      const second = await client().chat.completions.create({ model: 'gpt-4o-mini', messages, tools: [weather, clock] });
      expect(second.choices[0]!.finish_reason).toBe('stop');
      expect(second.choices[0]!.message.content).toBe('echo: 18 degrees, sunny');
    });

    it('tool_choice picks the tool; "none" answers with text', async () => {
      const named = await client().chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'what time is it' }],
        tools: [weather, clock],
        tool_choice: { type: 'function', function: { name: 'get_time' } },
      });
      const call = named.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(call.function).toEqual({ name: 'get_time', arguments: '{}' });
      const none = await client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], tools: [weather], tool_choice: 'none' });
      expect(none.choices[0]!.message).toMatchObject({ content: 'echo: hi' });
      expect(none.choices[0]!.message.tool_calls ?? []).toEqual([]);
    });

    it('a streamed tool call assembles in the SDK', async () => {
      const stream = client().chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Oslo' }], tools: [weather] });
      const done = await stream.finalChatCompletion();
      expect(done.choices[0]!.finish_reason).toBe('tool_calls');
      const call = done.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(call.function.name).toBe('get_weather');
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Oslo', unit: 'celsius', days: 1 });
    });

    it('legacy completions answer, as JSON and as a stream', async () => {
      const one = await client().completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test' });
      expect(one.object).toBe('text_completion');
      expect(one.choices[0]!.text).toBe('echo: Say this is a test');
      expect(one.usage!.total_tokens).toBeGreaterThan(0);
      const stream = await client().completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'one two three', stream: true });
      let text = '';
      let finish: string | null = null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.text ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      expect(text).toBe('echo: one two three');
      expect(finish).toBe('stop');
    });
  });

  it.skipIf(!curlFound)('every printed curl command works as printed', async () => {
    const commands = qs.stdout
      .split('\n\n')
      .map((block) => block.split('\n').filter((l) => !l.startsWith('#')).join('\n'))
      .filter((c) => c.startsWith('curl '));
    expect(commands.length).toBeGreaterThanOrEqual(7);
    expect(commands.some((c) => c.includes('/v1/completions'))).toBe(true);
    expect(commands.some((c) => c.includes('"tools"'))).toBe(true);
    expect(commands.some((c) => c.includes("'x-gateway-config: fallback'"))).toBe(true);
    for (const c of commands) {
      const out = await new Promise<string>((resolve, reject) =>
        execFile('sh', ['-c', `${c} -w '\\n%{http_code}' --max-time 10`], { timeout: 15_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
      );
      const status = out.trim().split('\n').at(-1);
      expect(status, `${c}\n${out}`).toBe('200');
      expect(out).toMatch(/echo: |"embedding"|"object":"list"|"tool_calls"/);
    }
  });

  it('is not imported by the serve path', () => {
    const compose = readdirSync(join(ROOT, 'src', 'compose')).map((f) => `compose/${f}`);
    for (const file of ['gateway.ts', ...compose, 'http/app.ts', 'config/options.ts']) {
      expect(readFileSync(join(ROOT, 'src', file), 'utf8')).not.toMatch(/demo\//);
    }
    // main.ts loads it only inside the quickstart command, with a dynamic import
    expect(readFileSync(join(ROOT, 'src', 'main.ts'), 'utf8')).not.toMatch(/^import .*demo\//m);
  });
});
