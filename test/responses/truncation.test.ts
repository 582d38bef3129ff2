import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The truncation rule of `POST /v1/responses` through the official openai SDK: windows from the
 * bootstrap file (over the shipped table), counted by the estimate for other models (4 tokens an
 * item plus UTF-8 bytes / 4) and by OpenAI's tokenizer for OpenAI models.
 */
const BOOTSTRAP = `
context_windows:
  edge-model: 105
  small-model: 60
  big-model: 10000
  gpt-4o-mini: 1000
`;

let fake: FakeOpenAI;
let gw: TestGateway;
let withDefault: TestGateway;

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway({ bootstrapYaml: BOOTSTRAP });
  withDefault = await startGateway({ bootstrapYaml: `${BOOTSTRAP}  "*": 50\n` });
});
afterEach(() => fake.reset());
afterAll(async () => {
  await gw?.close();
  await withDefault?.close();
  await fake?.close();
});

function sdk(provider: 'openai-compatible' | 'openai', on: TestGateway = gw, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({
    apiKey: 'sk-x',
    baseURL: `${on.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': on.key, 'x-gateway-provider': provider, 'x-gateway-custom-host': fake.baseUrl, ...headers },
  });
}

/** The error the SDK threw, for its status and body. */
async function refused(p: Promise<unknown>): Promise<{ status: number; error: { code?: string; param?: string; message?: string } }> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(OpenAI.APIError);
  const err = e as InstanceType<typeof OpenAI.APIError>;
  return { status: err.status!, error: err.error as { code?: string; param?: string; message?: string } };
}

const text = (n: number, c = 'a'): string => c.repeat(4 * n); // n tokens by the estimate
const msg = (role: string, content: string) => ({ type: 'message' as const, role: role as 'user', content });
const contents = (messages: unknown): unknown[] => (messages as { content: unknown }[]).map((m) => m.content);

describe('truncation disabled (the default): at the edge of the window', () => {
  it('an input one token under the window less max_output_tokens goes; one token over is a 400 naming input, and nothing is sent', async () => {
    // 4 + 100 = 104 tokens; the window is 105
    const r = await sdk('openai-compatible').responses.create({ model: 'edge-model', input: text(100), max_output_tokens: 1 });
    expect(r.status).toBe('completed');
    expect(fake.requests).toHaveLength(1);
    fake.reset();
    const { status, error } = await refused(sdk('openai-compatible').responses.create({ model: 'edge-model', input: text(100), max_output_tokens: 2 }));
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
    expect(error.message).toMatch(/edge-model has a context window of 105 tokens/);
    expect(fake.requests).toHaveLength(0);
  });

  it("an OpenAI model is counted by its tokenizer, on OpenAI's own Responses API too (the bootstrap file's window over the table's)", async () => {
    const input = 'Tokenizers split words like internationalisation and numbers like 1234567 differently. '.repeat(5);
    const tokens = 4 + countTokens(input);
    const under = await sdk('openai').responses.create({ model: 'gpt-4o-mini', input, max_output_tokens: 1000 - tokens });
    expect(under.status).toBe('completed');
    const [up] = await fake.waitForRequests(1);
    expect(up!.path).toBe('/v1/responses');
    fake.reset();
    const { status, error } = await refused(sdk('openai').responses.create({ model: 'gpt-4o-mini', input, max_output_tokens: 1000 - tokens + 1 }));
    expect(status).toBe(400);
    expect(error.code).toBe('context_length_exceeded');
    expect(fake.requests).toHaveLength(0);
  });

  it('a stream is refused the same, before it starts', async () => {
    const stream = sdk('openai-compatible').responses.stream({ model: 'edge-model', input: text(102) });
    const { status, error } = await refused(stream.finalResponse());
    expect(status).toBe(400);
    expect(error.code).toBe('context_length_exceeded');
    expect(fake.requests).toHaveLength(0);
  });

  it('instructions count: the same input with instructions no longer fits', async () => {
    const { error } = await refused(sdk('openai-compatible').responses.create({ model: 'edge-model', input: text(100), instructions: 'Be brief.' }));
    expect(error.code).toBe('context_length_exceeded');
  });
});

describe('truncation auto', () => {
  it('drops items from the middle: the first developer item and the latest items are sent; the change is said', async () => {
    // 6 + 5 × 14 = 76 tokens in a window of 60: the developer item and the three latest (48) fit, four (62) do not
    const input = [msg('developer', 'rules'), msg('user', text(10, 'a')), msg('assistant', text(10, 'b')), msg('user', text(10, 'c')), msg('assistant', text(10, 'd')), msg('user', text(10, 'e'))];
    const { data: r, response } = await sdk('openai-compatible').responses.create({ model: 'small-model', input, truncation: 'auto' }).withResponse();
    expect(r.status).toBe('completed');
    expect(r.truncation).toBe('auto');
    const [up] = await fake.waitForRequests(1);
    expect(contents(up!.body.messages)).toEqual(['rules', text(10, 'c'), text(10, 'd'), text(10, 'e')]);
    expect(response.headers.get('x-gateway-params-mapped')).toBe('input=6->4');
  });

  it('never sends a function call without its output: the pair is dropped whole', async () => {
    const input = [
      msg('user', text(10, 'q')),
      { type: 'function_call' as const, call_id: 'call_1', name: 'lookup', arguments: '{}' }, // 4 + 2 + 1
      { type: 'function_call_output' as const, call_id: 'call_1', output: text(3, 'o') }, // 4 + 3
      msg('assistant', text(12, 'r')), // 16
      msg('user', text(12, 'n')), // 16
    ];
    // 32 + the output (7) = 39 would fit in 44; with its call (7) too, 46 would not
    const r = await sdk('openai-compatible', gw).responses.create({ model: 'small-model', input, truncation: 'auto', max_output_tokens: 16 });
    expect(r.status).toBe('completed');
    const [up] = await fake.waitForRequests(1);
    const messages = up!.body.messages as { role: string; content: unknown }[];
    expect(messages.map((m) => m.role)).toEqual(['assistant', 'user']);
  });

  it('when the latest item alone does not fit: 400, nothing sent', async () => {
    const { status, error } = await refused(sdk('openai-compatible').responses.create({ model: 'small-model', input: [msg('user', 'hi'), msg('user', text(60))], truncation: 'auto' }));
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
    expect(fake.requests).toHaveLength(0);
  });

  it('runs on the conversation previous_response_id rebuilt: the oldest turns are dropped', async () => {
    const first = await sdk('openai-compatible').responses.create({ model: 'big-model', input: text(20, 'x') });
    fake.reset();
    const r = await sdk('openai-compatible').responses.create({ model: 'small-model', previous_response_id: first.id, input: text(10, 'y'), truncation: 'auto' });
    expect(r.previous_response_id).toBe(first.id);
    const [up] = await fake.waitForRequests(1);
    // the first turn's input (24) goes; its answer ("echo: " + 80 x's: 26) and the new input (14) stay
    expect(contents(up!.body.messages)).toEqual([`echo: ${text(20, 'x')}`, text(10, 'y')]);
  });
});

describe('which models are checked', () => {
  it('a model the table does not know is not checked', async () => {
    const r = await sdk('openai-compatible').responses.create({ model: 'unknown-model', input: text(300_000) });
    expect(r.status).toBe('completed');
  });

  it("the operator's default window (`*`) checks every model the table does not know", async () => {
    const { error } = await refused(sdk('openai-compatible', withDefault).responses.create({ model: 'unknown-model', input: text(60) }));
    expect(error.code).toBe('context_length_exceeded');
    const r = await sdk('openai-compatible', withDefault).responses.create({ model: 'unknown-model', input: text(40) });
    expect(r.status).toBe('completed');
  });

  it("the window is the target's model's: a fallback passes over a target too small for the input", async () => {
    const target = (model: string) => ({ provider: 'openai-compatible', custom_host: fake.baseUrl, api_key: 'k', override_params: { model } });
    const config = { strategy: { mode: 'fallback' }, targets: [target('small-model'), target('big-model')] };
    const { data: r, response } = await sdk('openai-compatible', gw, { 'x-gateway-config': JSON.stringify(config) })
      .responses.create({ model: 'any', input: text(100) })
      .withResponse();
    expect(r.status).toBe('completed');
    const [up] = await fake.waitForRequests(1);
    expect(up!.body.model).toBe('big-model');
    expect(fake.requests).toHaveLength(1);
    expect(response.headers.get('x-gateway-target')).toBe('config.targets[1]');
  });
});
