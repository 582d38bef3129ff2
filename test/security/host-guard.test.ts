import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, type Agent } from 'undici';
import { GatewayError } from '../../src/errors/gateway-error.js';
import {
  CUSTOM_HOST_FORBIDDEN,
  CustomHostForbiddenError,
  HostGuard,
  customHostRefusal,
} from '../../src/security/host-guard.js';
import { createEgressDispatcher } from '../../src/security/egress.js';

const none = new HostGuard({ trusted: [] });

function refusalOf(fn: () => void): GatewayError {
  try {
    fn();
  } catch (e) {
    return e as GatewayError;
  }
  throw new Error('expected a refusal');
}

describe('HostGuard.isAddressAllowed', () => {
  const refused: [string, string][] = [
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', '0.0.0.0/8'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private 10/8'],
    ['10.255.255.255', 'private 10/8'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private 172.16/12'],
    ['192.168.1.1', 'private 192.168/16'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.255', 'CGNAT'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'documentation'],
    ['::', 'unspecified v6'],
    ['::1', 'loopback v6'],
    ['[::1]', 'bracketed loopback v6'],
    ['fe80::1', 'link-local v6'],
    ['fe80::1%eth0', 'link-local v6 with zone'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['ff02::1', 'multicast v6'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback (dotted)'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback (hex)'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['64:ff9b::10.0.0.1', 'NAT64 of private'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['2002:7f00:1::1', '6to4 of loopback'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['2001:db8::1', 'documentation v6'],
    ['not-an-ip', 'not an address'],
    ['127.1', 'shorthand is not an address'],
  ];
  it.each(refused)('refuses %s (%s)', (ip) => {
    expect(none.isAddressAllowed(ip)).toBe(false);
  });

  const allowed: [string, string][] = [
    ['8.8.8.8', 'public v4'],
    ['1.1.1.1', 'public v4'],
    ['100.63.255.255', 'just below CGNAT'],
    ['100.128.0.0', 'just above CGNAT'],
    ['172.15.255.255', 'just below 172.16/12'],
    ['172.32.0.0', 'just above 172.16/12'],
    ['198.20.0.0', 'just above 198.18/15'],
    ['223.255.255.255', 'just below multicast'],
    ['2606:4700::1111', 'public v6'],
    ['2001:4860:4860::8888', 'public v6'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
    ['64:ff9b::8.8.8.8', 'NAT64 of public'],
  ];
  it.each(allowed)('allows %s (%s)', (ip) => {
    expect(none.isAddressAllowed(ip)).toBe(true);
  });

  it('allows non-public addresses inside trusted IPs and CIDRs only', () => {
    const g = new HostGuard({ trusted: ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', '192.168.1.0/24'] });
    expect(g.isAddressAllowed('127.0.0.1')).toBe(true);
    expect(g.isAddressAllowed('127.0.0.2')).toBe(false);
    expect(g.isAddressAllowed('10.1.2.3')).toBe(true);
    expect(g.isAddressAllowed('::ffff:10.1.2.3')).toBe(true);
    expect(g.isAddressAllowed('::ffff:7f00:1')).toBe(true);
    expect(g.isAddressAllowed('64:ff9b::10.1.2.3')).toBe(true);
    expect(g.isAddressAllowed('::1')).toBe(true);
    expect(g.isAddressAllowed('fd12::1')).toBe(true);
    expect(g.isAddressAllowed('fc00::1')).toBe(false);
    expect(g.isAddressAllowed('192.168.1.77')).toBe(true);
    expect(g.isAddressAllowed('192.168.2.1')).toBe(false);
    expect(g.isAddressAllowed('172.16.0.1')).toBe(false);
    expect(g.isAddressAllowed('169.254.169.254')).toBe(false);
  });

  it('fromEnv parses a comma list with spaces and empty entries', () => {
    const g = HostGuard.fromEnv(' 127.0.0.1 , ,10.0.0.0/8,My-VLLM.internal,::1,');
    expect(g.isAddressAllowed('127.0.0.1')).toBe(true);
    expect(g.isAddressAllowed('10.9.9.9')).toBe(true);
    expect(g.isAddressAllowed('::1')).toBe(true);
    expect(g.isAddressAllowed('192.168.0.1')).toBe(false);
    expect(g.isHostTrusted('my-vllm.internal')).toBe(true);
    expect(g.isHostTrusted('MY-VLLM.INTERNAL.')).toBe(true);
    expect(g.isHostTrusted('other.internal')).toBe(false);
    expect(HostGuard.fromEnv(undefined).isAddressAllowed('127.0.0.1')).toBe(false);
  });

  it.each(['10.0.0.0/33', '10.0.0.0/', '10.0.0/8', '::1/129', 'fd00::/abc', 'nonsense/8', 'host:8080', 'http://x'])(
    'throws at construction on the invalid entry %s',
    (entry) => {
      expect(() => new HostGuard({ trusted: ['127.0.0.1', entry] })).toThrow(entry);
      expect(() => HostGuard.fromEnv(`127.0.0.1,${entry}`)).toThrow(entry);
    },
  );
});

describe('HostGuard.checkUrl', () => {
  it.each([
    'http://127.0.0.1:8000/v1',
    'http://[::1]:8080/v1',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://localhost:8080',
    'http://LOCALHOST./v1',
    'http://foo.localhost',
    'http://10.0.0.5/v1',
    'http://169.254.169.254/latest/meta-data',
    'http://0.0.0.0:11434',
    'http://0x7f.1/',
    'http://2130706433/',
    'https://[fd00::1]/',
  ])('refuses %s', (url) => {
    const e = refusalOf(() => none.checkUrl(url));
    expect(e).toBeInstanceOf(GatewayError);
    expect(e.code).toBe('custom_host_not_allowed');
    expect(e.param).toBe('custom_host');
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/GATEWAY_TRUSTED_HOSTS/);
  });

  it.each(['file:///etc/passwd', 'gopher://x', 'ftp://example.com/', 'javascript:alert(1)'])('refuses the scheme of %s', (url) => {
    const e = refusalOf(() => none.checkUrl(url));
    expect(e).toBeInstanceOf(GatewayError);
    expect(e.code).toBe('custom_host_not_allowed');
    expect(e.message).toMatch(/http: or https:/);
  });

  it('refuses strings that are not URLs', () => {
    const e = refusalOf(() => none.checkUrl('not a url'));
    expect(e.code).toBe('custom_host_not_allowed');
    expect(e.message).toMatch(/not a valid URL/);
  });

  it.each(['https://api.openai.com/v1', 'http://8.8.8.8/', 'https://[2606:4700::1111]/', 'http://some-name.example:8080'])(
    'passes %s',
    (url) => {
      expect(() => none.checkUrl(url)).not.toThrow();
    },
  );

  it('passes trusted CIDRs, IPs and host names', () => {
    const g = new HostGuard({ trusted: ['10.0.0.0/8', '::1', 'localhost', 'my-vllm.internal'] });
    expect(() => g.checkUrl('http://10.20.30.40:8000/v1')).not.toThrow();
    expect(() => g.checkUrl('http://[::1]:8000/v1')).not.toThrow();
    expect(() => g.checkUrl('http://localhost:8000/v1')).not.toThrow();
    expect(() => g.checkUrl('http://My-VLLM.Internal:8000/v1')).not.toThrow();
    expect(() => g.checkUrl('http://127.0.0.1:8000/v1')).toThrow(GatewayError);
    expect(() => g.checkUrl('http://192.168.0.1/')).toThrow(GatewayError);
    // Only `localhost` itself is trusted by name, not its subdomains.
    const byName = new HostGuard({ trusted: ['localhost'] });
    expect(() => byName.checkUrl('http://foo.localhost/')).toThrow(GatewayError);
  });
});

describe('HostGuard.lookup (connect time)', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  const agents: Agent[] = [];

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      hits++;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.close()));
    await new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
  });

  function agentFor(guard: HostGuard): Agent {
    const agent = createEgressDispatcher(guard);
    agents.push(agent);
    return agent;
  }

  it('refuses a name that resolves to loopback; the server receives nothing', async () => {
    const before = hits;
    const err = await request(`http://localhost:${port}/`, { dispatcher: agentFor(none) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeDefined();
    const ge = customHostRefusal(err);
    expect(ge).toBeInstanceOf(GatewayError);
    expect(ge?.code).toBe('custom_host_not_allowed');
    // At connect time the field the host came from is not known: the message names the host.
    expect(ge?.param ?? undefined).toBeUndefined();
    expect(ge?.message).toMatch(/^The upstream host localhost resolves to a loopback address/);
    // The socket error itself (or its cause) carries the code and the resolved address.
    let cur = err as { code?: string; cause?: unknown; address?: string };
    while (cur.code !== CUSTOM_HOST_FORBIDDEN && cur.cause) cur = cur.cause as typeof cur;
    expect(cur.code).toBe(CUSTOM_HOST_FORBIDDEN);
    expect(cur).toBeInstanceOf(CustomHostForbiddenError);
    expect(cur.address).toBe('127.0.0.1');
    expect(hits).toBe(before);
  });

  it('connects when the name is trusted', async () => {
    const before = hits;
    const res = await request(`http://localhost:${port}/`, { dispatcher: agentFor(new HostGuard({ trusted: ['localhost'] })) });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('ok');
    expect(hits).toBe(before + 1);
  });

  it('connects when the resolved address is trusted', async () => {
    const res = await request(`http://localhost:${port}/`, { dispatcher: agentFor(new HostGuard({ trusted: ['127.0.0.0/8'] })) });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  });

  function callLookup(guard: HostGuard, host: string, all: boolean) {
    return new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) => {
      guard.lookup(host, { all }, (err, address, family) => resolve({ err, address, family }));
    });
  }

  it('handles options.all false and true', async () => {
    const trusted = new HostGuard({ trusted: ['127.0.0.1'] });
    const one = await callLookup(trusted, 'localhost', false);
    expect(one.err).toBeNull();
    expect(one.address).toBe('127.0.0.1');
    expect(one.family).toBe(4);
    const many = await callLookup(trusted, 'localhost', true);
    expect(many.err).toBeNull();
    expect(many.address).toEqual(expect.arrayContaining([{ address: '127.0.0.1', family: 4 }]));

    for (const all of [false, true]) {
      const refused = await callLookup(none, 'localhost', all);
      expect(refused.err?.code).toBe(CUSTOM_HOST_FORBIDDEN);
      expect((refused.err as CustomHostForbiddenError).gatewayError.code).toBe('custom_host_not_allowed');
    }
  });

  it('checks addresses given as the host too and passes DNS errors through', async () => {
    expect((await callLookup(none, '10.0.0.1', false)).err?.code).toBe(CUSTOM_HOST_FORBIDDEN);
    const pub = await callLookup(none, '8.8.8.8', false);
    expect(pub.err).toBeNull();
    expect(pub.address).toBe('8.8.8.8');
    const missing = await callLookup(none, 'does-not-exist.invalid', false);
    expect(missing.err).not.toBeNull();
    expect(missing.err?.code).not.toBe(CUSTOM_HOST_FORBIDDEN);
  });

  it('rejects a custom connector function', () => {
    expect(() => createEgressDispatcher(none, { connect: (_opts, cb) => cb(new Error('x'), null) })).toThrow(/connector/);
  });
});

describe('HostGuard.connectRefusal (the egress connector\'s check)', () => {
  const guard = new HostGuard({ trusted: ['gpu.internal', '10.0.0.0/8'] });

  it('refuses an IP literal host before dialling, and a reached address that is not allowed', () => {
    expect(guard.connectRefusal('127.0.0.1')?.gatewayError.code).toBe('custom_host_not_allowed');
    expect(guard.connectRefusal('::ffff:7f00:1')?.address).toBe('::ffff:7f00:1');
    expect(guard.connectRefusal('api.example.com', '169.254.169.254')?.gatewayError.message).toMatch(/api\.example\.com resolves to a link-local address/);
    // An unknown reached address (the socket already gone) is refused, never allowed by default.
    expect(guard.connectRefusal('api.example.com', '')).toBeInstanceOf(CustomHostForbiddenError);
  });

  it('allows public addresses, trusted CIDRs and trusted names; leaves an unresolved name to lookup', () => {
    expect(guard.connectRefusal('8.8.8.8')).toBeUndefined();
    expect(guard.connectRefusal('10.1.2.3')).toBeUndefined();
    expect(guard.connectRefusal('gpu.internal', '192.168.1.1')).toBeUndefined();
    expect(guard.connectRefusal('api.example.com')).toBeUndefined();
    expect(guard.connectRefusal('api.example.com', '2606:4700::1111')).toBeUndefined();
  });
});
