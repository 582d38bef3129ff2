import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckHttp } from '../../src/checks/http.js';
import { MAX_LOOKUPS } from '../../src/checks/valid-urls.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { chatResponse, deps, expectInvalid, json, localServer, run, verdict } from './_helpers.js';

describe('validUrls', () => {
  let site: Awaited<ReturnType<typeof localServer>>;
  const trusted = createCheckHttp(new HostGuard({ trusted: ['127.0.0.1', 'localhost'] }));
  const untrusted = createCheckHttp(new HostGuard({ trusted: [] }));

  beforeAll(async () => {
    site = await localServer((r, res) => {
      if (r.url === '/moved') {
        res.writeHead(301, { location: 'http://10.0.0.1/' });
        return res.end();
      }
      json(res, r.url === '/ok' ? 200 : 404, {});
    });
  });
  afterAll(async () => {
    await Promise.all([site.close(), trusted.close(), untrusted.close()]);
  });

  it('syntax only by default: well-formed URLs pass, malformed hosts fail, no network used', async () => {
    expect(await run('validUrls', {}, chatResponse('See https://example.com/docs, and (http://api.example.org/v1).'))).toEqual({
      verdict: true,
      data: { urls: 2, invalid: 0, lookups: 'disabled' },
    });
    expect(await verdict('validUrls', {}, chatResponse('go to http://bad_host/x'))).toBe(false);
    expect(await verdict('validUrls', {}, chatResponse('go to https://nodot'))).toBe(false);
    expect(await verdict('validUrls', {}, chatResponse('no links at all'))).toBe(true);
  });

  it('onlyDNS without lookups enabled changes nothing, and data says so', async () => {
    expect(await run('validUrls', { onlyDNS: true }, chatResponse('https://example.com'))).toMatchObject({ verdict: true, data: { lookups: 'disabled' } });
  });

  it('with lookups enabled: HEAD through the guard, below 400 passes, a redirect is an answer (not followed)', async () => {
    const d = deps({ http: trusted, allowUrlLookups: true });
    expect(await run('validUrls', {}, chatResponse(`ok ${site.url}/ok`), d)).toMatchObject({ verdict: true, data: { lookups: 'http' } });
    expect(await verdict('validUrls', {}, chatResponse(`gone ${site.url}/missing`), d)).toBe(false);
    expect(await verdict('validUrls', {}, chatResponse(`moved ${site.url}/moved`), d)).toBe(true);
    expect(site.received.filter((r) => r.method !== 'HEAD')).toEqual([]);
  });

  it('lookups reach only allowed hosts: a private URL is invalid', async () => {
    const d = deps({ http: untrusted, allowUrlLookups: true });
    site.received.length = 0;
    expect(await verdict('validUrls', {}, chatResponse(`${site.url}/ok`), d)).toBe(false);
    expect(await verdict('validUrls', { onlyDNS: true }, chatResponse(`http://localhost:${site.port}/ok`), d)).toBe(false);
    expect(site.received).toEqual([]);
  });

  it('onlyDNS resolves hosts through the guard', async () => {
    const d = deps({ http: trusted, allowUrlLookups: true });
    expect(await run('validUrls', { onlyDNS: true }, chatResponse(`http://localhost:${site.port}/x`), d)).toMatchObject({ verdict: true, data: { lookups: 'dns' } });
    expect(await verdict('validUrls', { onlyDNS: true }, chatResponse('http://no-such-host.invalid/x'), d)).toBe(false);
  });

  it(`more than ${MAX_LOOKUPS} URLs to look up is an error, not a pass`, async () => {
    const d = deps({ http: trusted, allowUrlLookups: true });
    const text = Array.from({ length: MAX_LOOKUPS + 1 }, (_, i) => `${site.url}/ok?${i}`).join(' ');
    await expect(run('validUrls', {}, chatResponse(text), d)).rejects.toThrow(/more than 10 URLs/);
  });

  it('not inverts; bad parameters are refused', async () => {
    expect(await verdict('validUrls', { not: true }, chatResponse('http://bad_host/'))).toBe(true);
    expectInvalid('validUrls', { onlyDNS: 'yes' }, 'onlyDNS');
  });
});
