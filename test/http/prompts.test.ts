/**
 * Prompt templates: the /v1/prompts API (versions, pagination, scope isolation
 * between two workspaces), bootstrap `prompts`, and requests whose config names a prompt_id,
 * rendered before routing, end to end through real HTTP to a fake provider.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { callApi, post, type Reply } from '../helpers/http.js';
import { chatContent, parseSse } from '../helpers/sse.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { until } from '../cache-http/_http.js';

const KEY_A = 'sk-test-workspace-a-0123456789';
const KEY_B = 'sk-test-workspace-b-0123456789';
const KEY_NOWHERE = 'sk-test-no-workspace-0123456789';
const KEYS = `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a }
  - { key: ${KEY_B}, name: team-b, workspace_id: ws-b }
  - { key: ${KEY_NOWHERE}, name: nowhere }
`;
const BOOTSTRAP = `${KEYS}
prompts:
  - name: Greeter
    workspace_id: ws-a
    model: gpt-4o-mini
    messages:
      - { role: system, content: "Greet {{who}} in {{language}}." }
`;

const support = (extra: Record<string, unknown> = {}) => ({
  name: 'Support reply',
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You answer for {{company}}. Be {{tone}}.' },
    { role: 'user', content: [{ type: 'text', text: 'Customer {{customer.name}} asks: {{question}}' }] },
  ],
  parameters: { temperature: 0.2, max_tokens: 200 },
  ...extra,
});

const VARS = { company: 'Acme', tone: 'brief', customer: { name: 'Ada' }, question: 'Where is my order?' };

describe('prompts: the API and rendering (memory store)', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  const api = (method: string, path: string, key: string | undefined = KEY_A, body?: unknown): Promise<Reply> => callApi(gw.url, method, path, key, body);
  const target = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', custom_host: fake.baseUrl, api_key: 'sk-provider-prompts', ...extra });
  const send = (path: string, config: unknown, body: unknown, key = KEY_A) =>
    post(`${gw.url}${path}`, { 'x-gateway-api-key': key, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config) }, body);
  const chat = (config: unknown, body: unknown, key = KEY_A) => send('/v1/chat/completions', config, body, key);

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    gw = await startGateway({ bootstrapYaml: BOOTSTRAP });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  describe('API', () => {
    it('POST creates (201 {id, slug, version_id}); GET by id or slug answers the record', async () => {
      const r = await api('POST', '/v1/prompts', KEY_A, support());
      expect(r.status).toBe(201);
      expect(Object.keys(r.json).sort()).toEqual(['id', 'slug', 'version_id']);
      expect(r.json.slug).toBe('support-reply');
      for (const ref of [r.json.id, 'support-reply']) {
        const got = await api('GET', `/v1/prompts/${ref}`);
        expect(got.status).toBe(200);
        expect(got.json).toEqual({
          ...support(),
          id: r.json.id,
          slug: 'support-reply',
          version_id: r.json.version_id,
          workspace_id: 'ws-a',
          created_at: got.json.created_at,
          last_updated_at: got.json.created_at,
        });
      }
      await api('DELETE', `/v1/prompts/${r.json.id}`);
    });

    it('bad bodies are 400s naming the field: template syntax, reserved or invalid parameters, nothing to render', async () => {
      const cases: [unknown, string][] = [
        [support({ messages: [{ role: 'system', content: 'Hi {{#open}}' }] }), 'messages[0].content'],
        [support({ messages: [{ role: 'user', content: [{ type: 'text', text: '{{> partial}}' }] }] }), 'messages[0].content[0].text'],
        [support({ messages: [{ role: 'robot', content: 'x' }] }), 'messages[0].role'],
        [support({ parameters: { temperature: 3 } }), 'parameters.temperature'],
        [support({ parameters: { stream: true } }), 'parameters.stream'],
        [support({ parameters: { model: 'x' } }), 'parameters.model'],
        [{ name: 'Nothing', model: 'm', parameters: {} }, 'messages'],
        [{ name: 'Bad prompt', prompt: 'Summarise {{text}' }, 'prompt'],
        [{ name: 'Completions', prompt: 'x', parameters: { best_of: 'many' } }, 'parameters.best_of'],
        [support({ colour: 'red' }), 'colour'],
        [support({ name: '' }), 'name'],
      ];
      for (const [body, param] of cases) {
        const r = await api('POST', '/v1/prompts', KEY_A, body);
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.json.error.code).toBe('invalid_request_body');
        expect(r.json.error.param ?? '').toBe(param);
      }
    });

    it('PUT adds a version; every version stays readable with ?version_id=; DELETE removes them all', async () => {
      const v1 = (await api('POST', '/v1/prompts', KEY_A, support({ name: 'Versioned' }))).json;
      const put = await api('PUT', '/v1/prompts/versioned', KEY_A, support({ name: 'Versioned', model: 'gpt-4o' }));
      expect(put.status).toBe(200);
      expect(put.json).toMatchObject({ id: v1.id, slug: 'versioned' });
      expect(put.json.version_id).not.toBe(v1.version_id);
      expect((await api('GET', '/v1/prompts/versioned')).json.model).toBe('gpt-4o');
      expect((await api('GET', `/v1/prompts/versioned?version_id=${v1.version_id}`)).json).toMatchObject({ model: 'gpt-4o-mini', version_id: v1.version_id });
      const unknownVersion = await api('GET', '/v1/prompts/versioned?version_id=nope');
      expect(unknownVersion.status).toBe(404);
      expect(unknownVersion.json.error).toMatchObject({ code: 'prompt_not_found', param: 'version_id' });
      // a prompt cannot move to another workspace
      expect((await api('PUT', '/v1/prompts/versioned', TEST_KEY, support({ workspace_id: 'ws-b' }))).json.error.param).toBe('workspace_id');
      const del = await api('DELETE', '/v1/prompts/versioned');
      expect(del.json).toEqual({ id: v1.id, slug: 'versioned', version_id: put.json.version_id, object: 'prompt', deleted: true });
      expect((await api('GET', `/v1/prompts/${v1.id}?version_id=${v1.version_id}`)).status).toBe(404);
    });

    it('list: {object: "list", data, total}, oldest first, page_size 0 and a page past the end, bad values 400', async () => {
      const made = [];
      for (const n of ['P one', 'P two', 'P three']) made.push((await api('POST', '/v1/prompts', KEY_B, support({ name: n }))).json);
      const page = (q: string) => api('GET', `/v1/prompts?${q}`, KEY_B);
      const all = await page('page_size=10');
      expect(all.json.object).toBe('list');
      expect(all.json.total).toBe(3);
      expect(all.json.data.map((p: { id: string }) => p.id)).toEqual(made.map((m) => m.id));
      expect(all.json.data[0]).toMatchObject({ name: 'P one', workspace_id: 'ws-b', messages: support().messages });
      expect((await page('page_size=2&current_page=1')).json.data.map((p: { name: string }) => p.name)).toEqual(['P three']);
      expect((await page('page_size=0')).json).toEqual({ object: 'list', data: [], total: 3 });
      expect((await page('page_size=2&current_page=5')).json).toEqual({ object: 'list', data: [], total: 3 });
      for (const q of ['page_size=-1', 'page_size=101', 'current_page=x', 'colour=red']) {
        const r = await page(q);
        expect(r.status, q).toBe(400);
        expect(r.json.error.code).toBe('invalid_query_parameter');
      }
      // the operator key sees every workspace, and may filter one
      expect((await api('GET', '/v1/prompts?workspace_id=ws-b', TEST_KEY)).json.total).toBe(3);
      for (const m of made) await api('DELETE', `/v1/prompts/${m.id}`, KEY_B);
    });

    it('scope isolation: another workspace\'s prompt is 404 for GET, PUT and DELETE, absent from its list, and unusable in its requests; naming another workspace is a 403', async () => {
      const mine = (await api('POST', '/v1/prompts', KEY_A, support({ name: 'Private' }))).json;
      for (const ref of [mine.id, mine.slug]) {
        const g = await api('GET', `/v1/prompts/${ref}`, KEY_B);
        expect(g.status).toBe(404);
        expect(g.json.error.code).toBe('prompt_not_found');
        expect((await api('PUT', `/v1/prompts/${ref}`, KEY_B, support())).status).toBe(404);
        expect((await api('DELETE', `/v1/prompts/${ref}`, KEY_B)).status).toBe(404);
      }
      expect((await api('GET', '/v1/prompts', KEY_B)).json.data.some((p: { id: string }) => p.id === mine.id)).toBe(false);
      expect((await api('GET', `/v1/prompts/${mine.id}`, KEY_A)).json.version_id).toBe(mine.version_id);
      // B's requests cannot render it, by id or by slug: it is unknown to B's key
      for (const ref of [mine.id, mine.slug]) {
        const r = await chat(target({ prompt_id: ref }), { variables: VARS }, KEY_B);
        expect(r.status).toBe(400);
        expect(r.json.error).toMatchObject({ code: 'invalid_config', param: 'config.prompt_id' });
      }
      expect(fake.requests).toHaveLength(0);
      // 403 forbidden_scope: naming another workspace, or a key without admin bound to no workspace
      const there = await api('POST', '/v1/prompts', KEY_B, support({ workspace_id: 'ws-a' }));
      expect(there.status).toBe(403);
      expect(there.json.error).toMatchObject({ code: 'forbidden_scope', param: 'workspace_id' });
      expect((await api('GET', '/v1/prompts?workspace_id=ws-a', KEY_B)).status).toBe(403);
      for (const [m, p, b] of [['POST', '/v1/prompts', support()], ['GET', '/v1/prompts'], ['GET', `/v1/prompts/${mine.id}`], ['PUT', `/v1/prompts/${mine.id}`, support()], ['DELETE', `/v1/prompts/${mine.id}`]] as const) {
        const r = await api(m, p, KEY_NOWHERE, b);
        expect(r.status, `${m} ${p}`).toBe(403);
        expect(r.json.error).toMatchObject({ code: 'forbidden_scope', param: 'x-gateway-api-key' });
      }
      await api('DELETE', `/v1/prompts/${mine.id}`);
    });
  });

  describe('rendering', () => {
    let prompt: { id: string; slug: string; version_id: string };
    beforeAll(async () => {
      prompt = (await api('POST', '/v1/prompts', KEY_A, support({ name: 'Render me' }))).json;
    });

    it('the upstream receives the rendered messages, then the request\'s own, the template\'s model and parameters, and no variables', async () => {
      const r = await chat(target({ prompt_id: prompt.slug }), { variables: VARS, messages: [{ role: 'user', content: 'And by Friday?' }] });
      expect(r.status).toBe(200);
      expect(r.json.choices[0].message.content).toBe('echo: And by Friday?');
      const [up] = fake.requests;
      expect(up!.body).toEqual({
        model: 'gpt-4o-mini',
        temperature: 0.2,
        max_tokens: 200,
        messages: [
          { role: 'system', content: 'You answer for Acme. Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Customer Ada asks: Where is my order?' }] },
          { role: 'user', content: 'And by Friday?' },
        ],
      });
      expect(up!.rawBody).not.toContain('variables');
    });

    it('precedence: the request\'s fields win over the template\'s, override_params over both; nothing is HTML-escaped', async () => {
      const r = await chat(target({ prompt_id: prompt.id, override_params: { max_tokens: 50 } }), {
        model: 'gpt-4o',
        temperature: 0.9,
        max_tokens: 999,
        variables: { ...VARS, company: 'Smith & <Sons> "Ltd"' },
      });
      expect(r.status).toBe(200);
      const body = fake.requests[0]!.body;
      expect(body).toMatchObject({ model: 'gpt-4o', temperature: 0.9, max_tokens: 50 });
      expect(body.messages[0].content).toBe('You answer for Smith & <Sons> "Ltd". Be brief.');
    });

    it('missing variables: 400 naming each (variables.<name>), the provider not called', async () => {
      const r = await chat(target({ prompt_id: prompt.slug }), { variables: { company: 'Acme' } });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('invalid_request_body');
      expect(r.json.error.param).toBe('variables.tone');
      expect(r.json.error.message).toContain('variables.customer.name');
      expect(r.json.issues.map((i: { path: string[] }) => i.path.join('.'))).toEqual(['variables.tone', 'variables.customer.name', 'variables.question']);
      expect((await chat(target({ prompt_id: prompt.slug }), {})).json.error.param).toBe('variables.company');
      expect((await chat(target({ prompt_id: prompt.slug }), { variables: ['Acme'] })).json.error.param).toBe('variables');
      expect(fake.requests).toHaveLength(0);
    });

    it('an unknown prompt (or version) is a 400 invalid_config naming config.prompt_id; so is a prompt_id on a target', async () => {
      for (const id of ['no-such-prompt', `${prompt.slug}@00000000-0000-4000-8000-000000000000`]) {
        const r = await chat(target({ prompt_id: id }), { variables: VARS });
        expect(r.status).toBe(400);
        expect(r.json.error).toMatchObject({ code: 'invalid_config', param: 'config.prompt_id' });
      }
      const onTarget = await chat({ strategy: { mode: 'fallback' }, targets: [target({ prompt_id: prompt.slug })] }, { variables: VARS });
      expect(onTarget.json.error).toMatchObject({ code: 'invalid_config', param: 'config.targets[0].prompt_id' });
      expect(fake.requests).toHaveLength(0);
    });

    it('streams: the rendered request goes upstream with stream: true and the answer is SSE', async () => {
      const r = await chat(target({ prompt_id: prompt.slug }), { variables: VARS, stream: true });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toContain('text/event-stream');
      const frames = parseSse(r.text);
      expect(chatContent(frames)).toBe('Hello');
      expect(frames.at(-1)!.data).toBe('[DONE]');
      const up = fake.requests[0]!.body;
      expect(up.stream).toBe(true);
      expect(up.messages[0].content).toBe('You answer for Acme. Be brief.');
      expect(up.variables).toBeUndefined();
    });

    it('a config with only prompt_id (required-key set 7) routes by the loose headers', async () => {
      const r = await post(
        `${gw.url}/v1/chat/completions`,
        {
          'x-gateway-api-key': KEY_A,
          'content-type': 'application/json',
          'x-gateway-config': JSON.stringify({ prompt_id: prompt.slug }),
          'x-gateway-provider': 'openai',
          'x-gateway-custom-host': fake.baseUrl,
          authorization: 'Bearer sk-provider-from-header',
        },
        { variables: VARS },
      );
      expect(r.status).toBe(200);
      expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-provider-from-header');
      expect(fake.requests[0]!.body.messages[0].content).toBe('You answer for Acme. Be brief.');
      // without a provider anywhere it is the usual 400
      expect((await chat({ prompt_id: prompt.slug }, { variables: VARS })).json.error.code).toBe('missing_provider');
    });

    it('a pinned version keeps rendering its own text after an update; the latest follows the update', async () => {
      const own = (await api('POST', '/v1/prompts', KEY_A, { name: 'Pinned', messages: [{ role: 'user', content: 'v1 {{x}}' }], model: 'm1' })).json;
      await api('PUT', '/v1/prompts/pinned', KEY_A, { name: 'Pinned', messages: [{ role: 'user', content: 'v2 {{x}}' }], model: 'm1' });
      const latest = await chat(target({ prompt_id: 'pinned' }), { variables: { x: 'a' } });
      expect(latest.json.choices[0].message.content).toBe('echo: v2 a');
      const pinned = await chat(target({ prompt_id: `pinned@${own.version_id}` }), { variables: { x: 'b' } });
      expect(pinned.json.choices[0].message.content).toBe('echo: v1 b');
    });

    it('the log line and the request record (GET /v1/logs) name the prompt version that rendered the request: id, slug, version_id', async () => {
      const v1 = (await api('POST', '/v1/prompts', KEY_A, { name: 'Logged', messages: [{ role: 'user', content: 'v1 {{x}}' }], model: 'm1' })).json;
      const v2 = (await api('PUT', '/v1/prompts/logged', KEY_A, { name: 'Logged', messages: [{ role: 'user', content: 'v2 {{x}}' }], model: 'm1' })).json;
      expect(v2.version_id).not.toBe(v1.version_id);
      const traced = async (config: unknown, body: unknown) => {
        const trace = `prompt-log-${Math.random().toString(36).slice(2)}`;
        const a = await post(`${gw.url}/v1/chat/completions`, { 'x-gateway-api-key': KEY_A, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config), 'x-gateway-trace-id': trace }, body);
        // the record is appended when the response closes: read until it is there
        const record = await until(`the record of ${trace}`, async () => (await api('GET', `/v1/logs?trace_id=${trace}`)).json.data[0]);
        const line = gw.logs.find((l) => l.msg === 'request' && l.trace_id === trace)!;
        return { status: a.status, record, line };
      };
      const latest = await traced(target({ prompt_id: 'logged' }), { variables: { x: 'a' } });
      expect(latest.status).toBe(200);
      const named = { id: v1.id, slug: 'logged', version_id: v2.version_id };
      expect(latest.record.prompt).toEqual(named);
      expect(latest.line.prompt).toEqual(named);
      // a pinned version is named as pinned, by id or slug
      const pinned = await traced(target({ prompt_id: `${v1.id}@${v1.version_id}` }), { variables: { x: 'b' } });
      expect(pinned.record.prompt).toEqual({ ...named, version_id: v1.version_id });
      expect(pinned.line.prompt).toEqual({ ...named, version_id: v1.version_id });
      // a request refused for a missing variable is logged with the version that needs it
      const missing = await traced(target({ prompt_id: 'logged' }), { variables: {} });
      expect(missing.status).toBe(400);
      expect(missing.record.prompt).toEqual(named);
      // never the template's text or the variables; a request without a prompt has no prompt field
      for (const t of [JSON.stringify(latest.record), JSON.stringify(latest.line)]) expect(t).not.toContain('v2 ');
      const plain = await traced(target(), { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      expect(plain.record).not.toHaveProperty('prompt');
      expect(plain.line).not.toHaveProperty('prompt');
    });

    it('completions: the template\'s prompt is rendered; a request may not send a prompt of its own', async () => {
      await api('POST', '/v1/prompts', KEY_A, { name: 'Summary', prompt: 'Summarise in {{n}} words: {{text}}', model: 'gpt-3.5-turbo-instruct', parameters: { max_tokens: 30 } });
      const r = await send('/v1/completions', target({ prompt_id: 'summary' }), { variables: { n: 5, text: 'a long story' } });
      expect(r.status).toBe(200);
      expect(fake.requests[0]!.body).toEqual({ model: 'gpt-3.5-turbo-instruct', max_tokens: 30, prompt: 'Summarise in 5 words: a long story' });
      const both = await send('/v1/completions', target({ prompt_id: 'summary' }), { variables: { n: 5, text: 't' }, prompt: 'mine' });
      expect(both.status).toBe(400);
      expect(both.json.error.param).toBe('prompt');
      // a chat request cannot use a completions template, nor embeddings any template
      const wrongKind = await chat(target({ prompt_id: 'summary' }), { variables: { n: 5, text: 't' } });
      expect(wrongKind.json.error).toMatchObject({ code: 'invalid_config', param: 'config.prompt_id' });
      const embeddings = await send('/v1/embeddings', target({ prompt_id: 'summary' }), { model: 'e', input: 'x' });
      expect(embeddings.json.error).toMatchObject({ code: 'invalid_config', param: 'config.prompt_id' });
    });

    it('variables without a prompt_id is a 400 naming it, not forwarded', async () => {
      const r = await chat(target(), { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], variables: { x: 1 } });
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'invalid_request_body', param: 'variables' });
      expect(fake.requests).toHaveLength(0);
    });

    it('guardrails and the cache key see the rendered request', async () => {
      const guarded = target({
        prompt_id: prompt.slug,
        input_guardrails: [{ 'default.contains': { words: ['Globex'], operator: 'none' }, deny: true }],
      });
      expect((await chat(guarded, { variables: VARS })).status).toBe(200);
      expect((await chat(guarded, { variables: { ...VARS, company: 'Globex' } })).status).toBe(446);
      fake.reset();
      const cached = target({ prompt_id: prompt.slug, cache: { mode: 'simple' } });
      const vars = { ...VARS, question: `cache ${Date.now()}` };
      expect((await chat(cached, { variables: vars })).cacheStatus).toBe('MISS');
      expect((await chat(cached, { variables: vars })).cacheStatus).toBe('HIT');
      expect((await chat(cached, { variables: { ...vars, tone: 'warm' } })).cacheStatus).toBe('MISS');
      expect(fake.requests).toHaveLength(2);
    });

    it('a prompt declared in the bootstrap file is there from the start, by its slug', async () => {
      const r = await chat(target({ prompt_id: 'greeter' }), { variables: { who: 'Ada', language: 'French' }, messages: [{ role: 'user', content: 'Bonjour' }] });
      expect(r.status).toBe(200);
      expect(fake.requests[0]!.body.messages[0]).toEqual({ role: 'system', content: 'Greet Ada in French.' });
      const declared = gw.logs.find((l) => l.msg === 'bootstrap prompts declared');
      expect(declared?.prompts).toEqual([expect.objectContaining({ slug: 'greeter', workspace_id: 'ws-a', outcome: 'created' })]);
    });
  });
});

describe('prompts with --redis', () => {
  let server: RedisServer;
  let fake: FakeOpenAI;
  let gw1: TestGateway;
  let gw2: TestGateway | undefined;
  beforeAll(async () => {
    [server, fake] = await Promise.all([startRedisServer(), FakeOpenAI.start()]);
    gw1 = await startGateway({ options: { redis: server.url }, bootstrapYaml: BOOTSTRAP });
  });
  afterAll(async () => {
    await gw1?.close();
    await gw2?.close();
    await fake?.close();
    await server?.close();
  });

  it('a prompt created through one gateway renders requests through another; the bootstrap file is declared once, and again only when it changes', async () => {
    const created = await callApi(gw1.url, 'POST', '/v1/prompts', KEY_A, support({ name: 'Shared' }));
    expect(created.status).toBe(201);
    gw2 = await startGateway({ options: { redis: server.url }, bootstrapYaml: BOOTSTRAP });
    // gw2 loaded the store at start: the prompt is in its mirror
    const r = await post(
      `${gw2.url}/v1/chat/completions`,
      { 'x-gateway-api-key': KEY_A, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify({ provider: 'openai', custom_host: fake.baseUrl, api_key: 'k', prompt_id: 'shared' }) },
      { variables: VARS },
    );
    expect(r.status).toBe(200);
    expect(fake.requests[0]!.body.messages[0].content).toBe('You answer for Acme. Be brief.');
    // the same bootstrap file again: nothing new
    const outcome = (g: TestGateway) => g.logs.find((l) => l.msg === 'bootstrap prompts declared')?.prompts[0].outcome;
    expect(outcome(gw1)).toBe('created');
    expect(outcome(gw2)).toBe('unchanged');
    const greeter = await callApi(gw2.url, 'GET', '/v1/prompts/greeter', KEY_A);
    // a changed entry adds a version (same id), the old one kept
    const gw3 = await startGateway({ options: { redis: server.url }, bootstrapYaml: BOOTSTRAP.replace('in {{language}}', 'in {{language}}, warmly') });
    try {
      expect(outcome(gw3)).toBe('updated');
      const now = await callApi(gw3.url, 'GET', '/v1/prompts/greeter', KEY_A);
      expect(now.json.id).toBe(greeter.json.id);
      expect(now.json.messages[0].content).toBe('Greet {{who}} in {{language}}, warmly.');
      expect((await callApi(gw3.url, 'GET', `/v1/prompts/greeter?version_id=${greeter.json.version_id}`, KEY_A)).json.messages[0].content).toBe('Greet {{who}} in {{language}}.');
    } finally {
      await gw3.close();
    }
  });
});
