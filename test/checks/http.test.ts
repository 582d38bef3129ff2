import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckHttpError, createCheckHttp } from '../../src/checks/http.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { localServer } from './_helpers.js';

const kindOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(CheckHttpError);
    return (e as CheckHttpError).kind;
  }
  throw new Error('expected a CheckHttpError');
};

describe('the checks HTTP client', () => {
  let big: Awaited<ReturnType<typeof localServer>>;
  const http = createCheckHttp(new HostGuard({ trusted: ['127.0.0.1'] }));
  const guarded = createCheckHttp(new HostGuard({ trusted: [] }));

  beforeAll(async () => {
    big = await localServer((_r, res) => res.end('x'.repeat(10_000)));
  });
  afterAll(async () => {
    await Promise.all([big.close(), http.close(), guarded.close()]);
  });

  it('caps the size of an answer', async () => {
    expect((await http.request(big.url, { method: 'GET', timeoutMs: 2000 })).text).toHaveLength(10_000);
    expect(await kindOf(http.request(big.url, { method: 'GET', timeoutMs: 2000, maxBytes: 1000 }))).toBe('too_large');
  });

  it('refuses non-http URLs, private IP literals and loopback names before any connection', async () => {
    big.received.length = 0;
    expect(await kindOf(guarded.request('file:///etc/passwd', { method: 'GET', timeoutMs: 100 }))).toBe('host_refused');
    expect(await kindOf(guarded.request('nonsense', { method: 'GET', timeoutMs: 100 }))).toBe('host_refused');
    expect(await kindOf(guarded.request('http://10.1.2.3/', { method: 'GET', timeoutMs: 100 }))).toBe('host_refused');
    expect(await kindOf(guarded.request('http://[fd00::1]/', { method: 'GET', timeoutMs: 100 }))).toBe('host_refused');
    expect(await kindOf(guarded.resolve('192.168.0.1', 100))).toBe('host_refused');
    expect(await kindOf(guarded.resolve('localhost', 100))).toBe('host_refused');
    expect(big.received).toEqual([]);
  });

  it('a cancelled call says so', async () => {
    const ac = new AbortController();
    ac.abort();
    expect(await kindOf(http.request(big.url, { method: 'GET', timeoutMs: 2000, signal: ac.signal }))).toBe('timeout');
  });
});

describe('createCheckDeps', () => {
  it('builds the deps once from the host guard: lookups off by default, the guard applies', async () => {
    const { createCheckDeps } = await import('../../src/checks/deps.js');
    const d = createCheckDeps(new HostGuard({ trusted: [] }));
    try {
      expect(d.allowUrlLookups).toBe(false);
      expect(await kindOf(d.http.request('http://127.0.0.1:9/', { method: 'GET', timeoutMs: 100 }))).toBe('host_refused');
    } finally {
      await d.close();
    }
    const on = createCheckDeps(new HostGuard({ trusted: [] }), { allowUrlLookups: true, now: () => 42 });
    expect(on.allowUrlLookups).toBe(true);
    expect(on.now()).toBe(42);
    await on.close();
  });
});
