import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckHttp } from '../../src/checks/http.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { chatRequest, deps, expectInvalid, json, localServer, run } from './_helpers.js';

describe('log', () => {
  let sink: Awaited<ReturnType<typeof localServer>>;
  const http = createCheckHttp(new HostGuard({ trusted: ['127.0.0.1'] }));
  const untrusted = createCheckHttp(new HostGuard({ trusted: [] }));

  beforeAll(async () => {
    sink = await localServer((r, res) => (r.url === '/down' ? json(res, 503, {}) : json(res, 200, {})));
  });
  afterAll(async () => {
    await Promise.all([sink.close(), http.close(), untrusted.close()]);
  });

  it('posts the context (no credentials) and passes once delivered', async () => {
    const input = chatRequest('hello', { headers: { authorization: 'Bearer sk-secret', 'x-gateway-api-key': 'gw' } });
    const out = await run('log', { logURL: `${sink.url}/in`, headers: { 'x-log-key': 'k' } }, input, deps({ http }));
    expect(out).toEqual({ verdict: true, data: { delivered: true } });
    const got = sink.received.at(-1)!;
    expect(got.headers['x-log-key']).toBe('k');
    expect(JSON.parse(got.body)).toMatchObject({ request: { text: 'hello' }, eventType: 'beforeRequestHook' });
    expect(got.body).not.toMatch(/sk-secret|"gw"/);
  });

  it('throws when it cannot deliver: non-2xx, refused host', async () => {
    await expect(run('log', { logURL: `${sink.url}/down` }, chatRequest('x'), deps({ http }))).rejects.toThrow(/answered 503/);
    await expect(run('log', { logURL: `${sink.url}/in` }, chatRequest('x'), deps({ http: untrusted }))).rejects.toThrow(/not allowed/);
  });

  it('refuses bad parameters', () => {
    expectInvalid('log', {}, 'logURL');
    expectInvalid('log', { logURL: 'not a url' }, 'logURL');
  });
});
