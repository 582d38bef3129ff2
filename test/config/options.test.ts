import { describe, expect, it } from 'vitest';
import { OPTION_TABLE, helpText, readOptions } from '../../src/config/options.js';

function optionsError(cli: Record<string, string | undefined>, env: NodeJS.ProcessEnv = {}): string {
  try {
    readOptions(cli, env);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected readOptions to throw');
}

describe('readOptions', () => {
  it('uses the defaults when nothing is given', () => {
    // toMatchObject: options added later need not break this test.
    expect(readOptions({}, {})).toMatchObject({
      port: 8787,
      host: '127.0.0.1',
      bootstrap: undefined,
      pipelines: 'pipelines',
      'api-keys': [],
      'trusted-hosts': [],
      'provider-base-urls': {},
      'body-limit': 16 * 1024 * 1024,
      'shutdown-timeout': 10_000,
      'drain-delay': 5000,
      'client-headers-timeout': 20_000,
      'client-body-timeout': 60_000,
      'keep-alive-timeout': 65_000,
      'stream-idle-timeout': 120_000,
      'upstream-timeout': 120_000,
      'log-level': 'info',
      'heap-growth': 50,
    });
  });

  it('checks the client limits and the drain delay against each other, naming the flag', () => {
    expect(readOptions({ 'client-headers-timeout': '500', 'client-body-timeout': '500' }, {})['client-headers-timeout']).toBe(500);
    expect(optionsError({ 'client-headers-timeout': '30000', 'client-body-timeout': '10000' })).toContain(
      '--client-headers-timeout (GATEWAY_CLIENT_HEADERS_TIMEOUT): must not be longer than --client-body-timeout',
    );
    expect(readOptions({}, { GATEWAY_DRAIN_DELAY: '0' })['drain-delay']).toBe(0);
    // The drain delay is spent within --shutdown-timeout (capped by it), so a short timeout alone is valid.
    expect(readOptions({ 'shutdown-timeout': '2000' }, {})['drain-delay']).toBe(5000);
    expect(optionsError({ 'drain-delay': '-1' })).toContain('--drain-delay (GATEWAY_DRAIN_DELAY): must be whole milliseconds');
    expect(optionsError({ 'keep-alive-timeout': '0' })).toContain('--keep-alive-timeout (GATEWAY_KEEP_ALIVE_TIMEOUT)');
  });

  it('takes a whole heap growth percentage, 0 meaning V8 decides', () => {
    expect(readOptions({ 'heap-growth': '0' }, {})['heap-growth']).toBe(0);
    expect(readOptions({}, { GATEWAY_HEAP_GROWTH: '100' })['heap-growth']).toBe(100);
    expect(optionsError({ 'heap-growth': '1.5' })).toContain('--heap-growth (GATEWAY_HEAP_GROWTH): must be a whole percentage');
    expect(optionsError({ 'heap-growth': '5000' })).toContain('--heap-growth (GATEWAY_HEAP_GROWTH)');
  });

  it('takes the environment over the defaults and the CLI over the environment', () => {
    const env = { PORT: '9000', HOST: '0.0.0.0', LOG_LEVEL: 'debug', GATEWAY_BODY_LIMIT: '1kb' };
    const fromEnv = readOptions({}, env);
    expect(fromEnv.port).toBe(9000);
    expect(fromEnv.host).toBe('0.0.0.0');
    expect(fromEnv['log-level']).toBe('debug');
    expect(fromEnv['body-limit']).toBe(1024);
    const fromCli = readOptions({ port: '9100', 'log-level': 'warn' }, env);
    expect(fromCli.port).toBe(9100);
    expect(fromCli['log-level']).toBe('warn');
    // not given on the CLI: still from the environment
    expect(fromCli.host).toBe('0.0.0.0');
    expect(fromCli['body-limit']).toBe(1024);
  });

  it('reads every option that has a default from its environment variable', () => {
    const env: NodeJS.ProcessEnv = {};
    for (const o of OPTION_TABLE) if ('def' in o) env[o.env] = o.def;
    expect(readOptions({}, env)).toEqual(readOptions({}, {}));
    expect(readOptions({}, { ...env, PORT: '1234' }).port).toBe(1234);
    expect(readOptions({}, { GATEWAY_BOOTSTRAP: '/etc/sluice.yaml' }).bootstrap).toBe('/etc/sluice.yaml');
    expect(readOptions({}, { GATEWAY_PIPELINES_DIR: '/srv/p' }).pipelines).toBe('/srv/p');
  });

  it.each([
    ['0', 0],
    ['1', 1],
    ['100b', 100],
    ['512kb', 512 * 1024],
    ['512KB', 512 * 1024],
    ['16mb', 16 * 1024 ** 2],
    ['2 mb', 2 * 1024 ** 2],
    ['1gb', 1024 ** 3],
  ])('body-limit %j → %i bytes', (raw, bytes) => {
    expect(readOptions({ 'body-limit': raw }, {})['body-limit']).toBe(bytes);
  });

  it.each(['16 megabytes', '1.5mb', '-1', 'mb', '10tb', ''])('refuses body-limit %j naming the option', (raw) => {
    const msg = optionsError({ 'body-limit': raw });
    expect(msg).toContain('--body-limit (GATEWAY_BODY_LIMIT)');
  });

  it.each(['-1', '65536', 'http', '80.5', '', ' ', '0x50'])('refuses port %j naming the option and its variable', (raw) => {
    const msg = optionsError({ port: raw });
    expect(msg).toMatch(/^invalid options:/);
    expect(msg).toContain('--port (PORT)');
    expect(msg).not.toContain('--host');
  });

  it('names an invalid port that came from the environment', () => {
    expect(optionsError({}, { PORT: 'eighty' })).toContain('--port (PORT)');
  });

  it('lists every invalid option', () => {
    const msg = optionsError({ port: 'x', 'log-level': 'loud', 'shutdown-timeout': '0' });
    expect(msg).toContain('--port');
    expect(msg).toContain('--log-level (LOG_LEVEL)');
    expect(msg).toContain('--shutdown-timeout (GATEWAY_SHUTDOWN_TIMEOUT)');
  });

  it('splits comma lists and trims them', () => {
    const k1 = 'sk-gw-fake-1111111111';
    const k2 = 'sk-gw-fake-2222222222';
    const o = readOptions({ 'api-keys': ` ${k1} , ${k2},,`, 'trusted-hosts': '10.0.0.0/8,gpu.internal' }, {});
    expect(o['api-keys']).toEqual([k1, k2]);
    expect(o['trusted-hosts']).toEqual(['10.0.0.0/8', 'gpu.internal']);
  });

  it('refuses a short gateway key, naming its place in the list', () => {
    const msg = optionsError({}, { GATEWAY_API_KEYS: 'sk-gw-fake-1111111111,short' });
    expect(msg).toContain('--api-keys[1] (GATEWAY_API_KEYS)');
    expect(msg).not.toContain('api-keys[0]');
  });

  it('reads provider-base-urls as provider=url pairs (a url may hold =)', () => {
    expect(readOptions({ 'provider-base-urls': 'openai=http://proxy/v1,groq=http://g/v1?a=b' }, {})['provider-base-urls']).toEqual({
      openai: 'http://proxy/v1',
      groq: 'http://g/v1?a=b',
    });
    const msg = optionsError({ 'provider-base-urls': 'openai=http://x,broken' });
    expect(msg).toContain('--provider-base-urls (GATEWAY_PROVIDER_BASE_URLS)');
    expect(msg).toContain('"broken" is not provider=url');
    expect(optionsError({ 'provider-base-urls': '=http://x' })).toContain('not provider=url');
  });

  it('takes the request log size as a whole number from 1 to 100,000 (default 10,000)', () => {
    expect(readOptions({}, {})['request-log-size']).toBe(10_000);
    expect(readOptions({}, { GATEWAY_REQUEST_LOG_SIZE: '500' })['request-log-size']).toBe(500);
    for (const raw of ['0', '100001', '1.5', 'many']) expect(optionsError({ 'request-log-size': raw })).toContain('--request-log-size (GATEWAY_REQUEST_LOG_SIZE)');
  });

  it('refuses non-positive or fractional timeouts', () => {
    for (const raw of ['0', '-5', '1.5', 'abc']) {
      expect(optionsError({ 'stream-idle-timeout': raw })).toContain('--stream-idle-timeout');
    }
  });
});

describe('helpText', () => {
  it('lists every flag with its environment variable and default', () => {
    const help = helpText();
    for (const o of OPTION_TABLE) {
      expect(help).toContain(`--${o.flag} <value>`);
      expect(help).toContain(`env ${o.env}`);
      if ('def' in o) expect(help).toContain(`default ${o.def}`);
    }
  });
});
