import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckHttp } from '../../src/checks/http.js';
import { requestInput } from '../../src/checks/text.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { chatResponse, deps, expectInvalid, json, localServer, run } from './_helpers.js';

type Server = Awaited<ReturnType<typeof localServer>>;

const SECRET_HEADERS = {
  authorization: 'Bearer sk-provider-secret',
  'x-gateway-api-key': 'gw-secret',
  'x-gateway-config': '{"provider":"openai","api_key":"sk-inline-secret"}',
  'x-gateway-virtual-key': 'vk-secret',
  'x-gateway-cloud-b-secret-access-key': 'aws-secret',
  'x-gateway-cloud-b-session-token': 'aws-session',
  'x-api-key': 'anthropic-secret',
  'api-key': 'azure-secret',
  cookie: 'sid=cookie-secret',
  'x-custom-auth-token': 'custom-secret',
};

describe('webhook', () => {
  let hook: Server;
  let target: Server;
  const trusted = createCheckHttp(new HostGuard({ trusted: ['127.0.0.1'] }));
  const untrusted = createCheckHttp(new HostGuard({ trusted: [] }));
  const d = deps({ http: trusted });

  beforeAll(async () => {
    target = await localServer((_r, res) => json(res, 200, { verdict: true }));
    hook = await localServer((r, res) => {
      const path = r.url;
      if (path === '/pass') return json(res, 200, { verdict: true, data: { score: 0.1 } });
      if (path === '/fail') return json(res, 200, { verdict: false, data: { reason: 'toxic' } });
      if (path === '/transform-request')
        return json(res, 200, { verdict: true, transformedData: { request: { json: { model: 'm', messages: [{ role: 'user', content: 'clean' }] } } } });
      if (path === '/transform-response') return json(res, 200, { verdict: true, transformedData: { response: { json: { choices: [{ message: { content: 'safe' } }] } } } });
      if (path === '/500') return json(res, 500, { error: 'down' });
      if (path === '/no-verdict') return json(res, 200, { ok: true });
      if (path === '/not-json') return res.end('hello');
      if (path === '/redirect-private') {
        res.writeHead(302, { location: 'http://10.0.0.1/hook' });
        return res.end();
      }
      if (path === '/redirect-local') {
        res.writeHead(307, { location: `${target.url}/hook` });
        return res.end();
      }
      // /slow: never answers (the test's timeout ends it; close() drops the socket).
    });
  });
  afterAll(async () => {
    await Promise.all([hook.close(), target.close(), trusted.close(), untrusted.close()]);
  });

  const input = () =>
    requestInput({
      endpoint: 'chat',
      body: { model: 'm', messages: [{ role: 'user', content: 'dirty' }] },
      metadata: { user: 'u1' },
      headers: { ...SECRET_HEADERS, 'user-agent': 'sdk/1', 'x-gateway-trace-id': 't-1' },
      provider: 'openai',
      traceId: 't-1',
    });

  it('the reply verdict decides; its data is kept', async () => {
    expect(await run('webhook', { webhookURL: `${hook.url}/pass` }, input(), d)).toEqual({ verdict: true, data: { score: 0.1 } });
    expect(await run('webhook', { webhookURL: `${hook.url}/fail` }, input(), d)).toEqual({ verdict: false, data: { reason: 'toxic' } });
  });

  it('posts the context with the configured headers and without any gateway or provider secret', async () => {
    hook.received.length = 0;
    await run('webhook', { webhookURL: `${hook.url}/pass`, headers: { 'x-webhook-secret': 'for-the-hook' } }, input(), d);
    const got = hook.received[0]!;
    expect(got.method).toBe('POST');
    expect(got.headers['x-webhook-secret']).toBe('for-the-hook');
    expect(got.headers.authorization).toBeUndefined();
    const posted = JSON.parse(got.body);
    expect(posted).toMatchObject({
      request: { json: { model: 'm' }, text: 'dirty', headers: { 'user-agent': 'sdk/1', 'x-gateway-trace-id': 't-1' } },
      requestType: 'chatComplete',
      provider: 'openai',
      metadata: { user: 'u1' },
      eventType: 'beforeRequestHook',
      trace_id: 't-1',
    });
    for (const [name, value] of Object.entries(SECRET_HEADERS)) {
      expect(got.body, name).not.toContain(value.includes('"') ? 'sk-inline-secret' : value);
      expect(Object.keys(posted.request.headers)).not.toContain(name);
    }
  });

  it('transformedData replaces the body of the phase (mutator)', async () => {
    const req = await run('webhook', { webhookURL: `${hook.url}/transform-request` }, input(), d);
    expect(req.transformed).toEqual({ request: { body: { model: 'm', messages: [{ role: 'user', content: 'clean' }] } } });
    const res = await run('webhook', { webhookURL: `${hook.url}/transform-response` }, chatResponse('bad'), d);
    expect(res.transformed).toEqual({ response: { body: { choices: [{ message: { content: 'safe' } }] } } });
    expect(JSON.parse(hook.received.at(-1)!.body)).toMatchObject({ eventType: 'afterRequestHook', response: { text: 'bad', statusCode: 200 } });
  });

  it('a non-2xx answer, a reply without a boolean verdict or non-JSON throws (fail closed)', async () => {
    await expect(run('webhook', { webhookURL: `${hook.url}/500` }, input(), d)).rejects.toThrow(/answered 500/);
    await expect(run('webhook', { webhookURL: `${hook.url}/no-verdict` }, input(), d)).rejects.toThrow(/without a boolean verdict/);
    await expect(run('webhook', { webhookURL: `${hook.url}/not-json` }, input(), d)).rejects.toThrow(/did not answer JSON/);
  });

  it('times out after `timeout` ms', async () => {
    await expect(run('webhook', { webhookURL: `${hook.url}/slow`, timeout: 100 }, input(), d)).rejects.toThrow(/did not answer within 100 ms/);
  });

  it('does not follow redirects: to a private address, or anywhere', async () => {
    await expect(run('webhook', { webhookURL: `${hook.url}/redirect-private` }, input(), d)).rejects.toThrow(/answered 302; redirects are not followed/);
    target.received.length = 0;
    await expect(run('webhook', { webhookURL: `${hook.url}/redirect-local` }, input(), d)).rejects.toThrow(/redirects are not followed/);
    expect(target.received).toEqual([]);
  });

  it('reaches only hosts the host guard allows (loopback and private refused unless trusted)', async () => {
    hook.received.length = 0;
    const u = deps({ http: untrusted });
    await expect(run('webhook', { webhookURL: `${hook.url}/pass` }, input(), u)).rejects.toThrow(/127\.0\.0\.1:\d+ is not allowed: .*loopback/);
    await expect(run('webhook', { webhookURL: `http://localhost:${hook.port}/pass` }, input(), u)).rejects.toThrow(/not allowed/);
    await expect(run('webhook', { webhookURL: 'http://169.254.169.254/latest/meta-data' }, input(), u)).rejects.toThrow(/link-local/);
    await expect(run('webhook', { webhookURL: 'http://[::ffff:10.0.0.1]/x' }, input(), u)).rejects.toThrow(/private/);
    expect(hook.received).toEqual([]);
  });

  it('refuses bad parameters', () => {
    expectInvalid('webhook', {}, 'webhookURL');
    expectInvalid('webhook', { webhookURL: 'ftp://x/y' }, 'webhookURL');
    expectInvalid('webhook', { webhookURL: 'https://x/y', timeout: 0 }, 'timeout');
    expectInvalid('webhook', { webhookURL: 'https://x/y', timeout: 60_000 }, 'timeout');
    expectInvalid('webhook', { webhookURL: 'https://x/y', headers: { a: 1 } }, 'headers.a');
    expectInvalid('webhook', { webhookURL: 'https://x/y', not: true }, '');
  });
});
