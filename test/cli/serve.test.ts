/**
 * End-to-end tests of the compiled CLI (`node dist/main.js serve ...`): real child processes, real
 * sockets. dist/ is rebuilt once in beforeAll so the processes run the current sources.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayProcess, type Exit } from '../scale/_process.js';
import { chatChunks, FakeOpenAI, sseFrames } from '../fakes/openai-server.js';
import { freePort } from '../helpers/net.js';

const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'dist', 'main.js');

const KEY_A = 'sk-cli-test-key-aaaaaaaaaaaaaaaa';
const KEY_B = 'sk-cli-test-key-bbbbbbbbbbbbbbbb';
const OTHER_KEY = 'sk-cli-test-key-not-configured-x';

// ------------------------------------------------------------------------------------------------
// Process helpers

type Cli = GatewayProcess;
const children = new Set<Cli>();
const tempDirs: string[] = [];
let workDir: string;

function run(args: string[], env: Record<string, string> = {}): Cli {
  const cli = GatewayProcess.node([MAIN, ...args], env, workDir);
  children.add(cli);
  return cli;
}

/** Run to completion (the process must exit by itself). */
async function runToExit(args: string[], env: Record<string, string> = {}, timeoutMs = 10_000): Promise<Cli & { exit: Exit }> {
  const cli = run(args, env);
  await cli.waitExit(timeoutMs);
  return cli as Cli & { exit: Exit };
}

async function killAll(): Promise<void> {
  const all = [...children];
  children.clear();
  await Promise.all(
    all.map(async (c) => {
      if (c.exit) return;
      c.child.kill('SIGKILL');
      await c.waitExit(5000).catch(() => undefined);
    }),
  );
}

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
  tempDirs.push(d);
  return d;
}

// ------------------------------------------------------------------------------------------------
// HTTP helpers (fresh connection per request: agent false)

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function httpRequest(
  port: number,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string; timeoutMs?: number },
): Promise<Reply> {
  return new Promise((res, rej) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers, agent: false },
      (r) => {
        let body = '';
        r.setEncoding('utf8');
        r.on('data', (d: string) => (body += d));
        r.on('end', () => {
          clearTimeout(timer);
          res({ status: r.statusCode ?? 0, headers: r.headers, body });
        });
        r.on('error', (e) => {
          clearTimeout(timer);
          rej(e);
        });
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`request ${opts.path} timed out`)), opts.timeoutMs ?? 5000);
    req.on('error', (e) => {
      clearTimeout(timer);
      rej(e);
    });
    req.end(opts.body);
  });
}

/** Resolves true when a TCP connection to the port is accepted, false when refused (bounded). */
function canConnect(port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((res, rej) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      sock.destroy();
      rej(new Error(`connect to ${port} neither succeeded nor failed within ${timeoutMs}ms`));
    }, timeoutMs);
    sock.once('connect', () => {
      clearTimeout(timer);
      sock.destroy();
      res(true);
    });
    sock.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (e.code === 'ECONNREFUSED') res(false);
      else rej(e);
    });
  });
}

/** Start `serve` on a free port and wait until it is listening. */
async function serve(args: string[] = [], env: Record<string, string> = {}): Promise<{ cli: Cli; port: number; line: Record<string, any> }> {
  const port = await freePort();
  const cli = run(['serve', '--port', String(port), ...args], env);
  const line = (await cli.listening())[0]!;
  return { cli, port, line };
}

function modelsWith(port: number, key: string): Promise<Reply> {
  return httpRequest(port, { path: '/v1/models', headers: { 'x-gateway-api-key': key } });
}

// ------------------------------------------------------------------------------------------------

beforeAll(() => {
  try {
    execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'pipe', timeout: 60_000 });
  } catch (e) {
    // tsc still emits JS on type errors (noEmitOnError is off); those belong to `npm run typecheck`.
    // Anything else (tsc missing, timeout, no emit) fails the suite.
    const out = String((e as { stdout?: Buffer }).stdout ?? '');
    const diagnostics = out.split('\n').filter((l) => l.trim());
    const onlyTypeErrors = diagnostics.length > 0 && diagnostics.every((l) => /error TS\d+|^\s/.test(l));
    if (!onlyTypeErrors || (e as { signal?: string }).signal) throw e;
    console.warn(`tsc reported type errors; testing the emitted JS anyway:\n${out}`);
  }
  // Children run in an empty directory so a default ./pipelines of the repo cannot leak in.
  workDir = tempDir();
}, 90_000);

afterEach(async () => {
  await killAll();
});

afterAll(async () => {
  await killAll();
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

describe('CLI usage', () => {
  it('serve --help lists every option and exits 0', async () => {
    const cli = await runToExit(['serve', '--help']);
    expect(cli.exit.code).toBe(0);
    for (const flag of [
      'port',
      'host',
      'bootstrap',
      'pipelines',
      'api-keys',
      'trusted-hosts',
      'body-limit',
      'shutdown-timeout',
      'log-level',
    ]) {
      expect(cli.stdout).toContain(`--${flag} `);
    }
    for (const env of ['PORT', 'HOST', 'GATEWAY_API_KEYS', 'GATEWAY_SHUTDOWN_TIMEOUT', 'LOG_LEVEL']) {
      expect(cli.stdout).toContain(`env ${env}`);
    }
    // Help does not start a server.
    expect(cli.stdout).not.toContain('"msg":"listening"');
  });

  it('serve --help puts every description in one column, past the longest flag, and says what a bootstrap file declares', async () => {
    const cli = await runToExit(['serve', '--help']);
    const optionLines = cli.stdout.split('\n').filter((l) => /^ {2}(--|-h)/.test(l));
    expect(optionLines.length).toBeGreaterThan(30);
    const columns = new Set(optionLines.map((l) => /^ {2}\S.*?\S {2,}(?=\S)/.exec(l)?.[0].length));
    expect([...columns]).toHaveLength(1);
    // Continuation lines (wrapped text, env) start in the same column; no line runs past 100.
    const column = [...columns][0]!;
    for (const l of cli.stdout.split('\n').filter((x) => /^ {3,}\S/.test(x))) expect(l.search(/\S/)).toBe(column);
    for (const l of cli.stdout.split('\n')) expect(l.length, l).toBeLessThanOrEqual(100);
    const bootstrap = cli.stdout.slice(cli.stdout.indexOf('--bootstrap'), cli.stdout.indexOf('env GATEWAY_BOOTSTRAP'));
    for (const part of ['gateway keys', 'virtual keys', 'usage limits', 'prompts', 'prices']) expect(bootstrap).toContain(part);
  });

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const cli = await runToExit([flag]);
      expect(cli.exit.code).toBe(0);
      expect(cli.stdout).toBe(`sluice ${version}\n`);
    }
  });

  it('no command prints usage and exits 0', async () => {
    const cli = await runToExit([]);
    expect(cli.exit.code).toBe(0);
    expect(cli.stdout).toMatch(/Usage: sluice <command>/);
    expect(cli.stdout).toContain('serve');
  });

  it('an unknown command exits non-zero with a message', async () => {
    const cli = await runToExit(['frobnicate']);
    expect(cli.exit.code).not.toBe(0);
    expect(cli.exit.code).not.toBeNull();
    expect(cli.stderr).toContain('unknown command "frobnicate"');
  });

  it('an unknown flag exits non-zero naming it', async () => {
    const cli = await runToExit(['serve', '--no-such-flag', 'x']);
    expect(cli.exit.code).not.toBe(0);
    expect(cli.exit.code).not.toBeNull();
    expect(cli.stderr).toContain('--no-such-flag');
    expect(cli.stdout).not.toContain('"msg":"listening"');
  });

  it.each([
    [['--port', 'abc'], '--port'],
    [['--port', '70000'], '--port'],
    [['--body-limit', '12zz'], '--body-limit'],
    [['--port', ''], '--port'],
    [['--shutdown-timeout=0'], '--shutdown-timeout'],
    [['--shutdown-timeout', '5s'], '--shutdown-timeout'],
    [['--log-level', 'loud'], '--log-level'],
  ])('invalid option value %j exits non-zero naming %s', async (args, flag) => {
    const cli = await runToExit(['serve', ...args]);
    expect(cli.exit.code).not.toBe(0);
    expect(cli.exit.code).not.toBeNull();
    expect(cli.stderr).toContain(`${flag} `);
    expect(cli.stderr).toContain('invalid options');
    expect(cli.stdout).not.toContain('"msg":"listening"');
  });

  it('an invalid value from the environment is named with its variable', async () => {
    const cli = await runToExit(['serve'], { GATEWAY_BODY_LIMIT: 'lots' });
    expect(cli.exit.code).not.toBe(0);
    expect(cli.stderr).toContain('--body-limit (GATEWAY_BODY_LIMIT)');
  });
});

describe('empty environment variables', () => {
  it('count as unset: the defaults apply', async () => {
    const { line, port } = await serve([], {
      HOST: '',
      GATEWAY_SHUTDOWN_TIMEOUT: '',
      GATEWAY_BODY_LIMIT: '',
      LOG_LEVEL: '',
      GATEWAY_API_KEYS: KEY_A,
    });
    expect(line.address).toBe('127.0.0.1');
    expect(line.port).toBe(port);
  });

  it('a blank PORT is an error, not "any free port"', async () => {
    // Number(' ') is 0: before ports had to be digits, this silently listened on a random port.
    const cli = await runToExit(['serve'], { PORT: ' ', GATEWAY_API_KEYS: KEY_A });
    expect(cli.exit.code).not.toBe(0);
    expect(cli.exit.code).not.toBeNull();
    expect(cli.stderr).toContain('--port (PORT)');
    expect(cli.stdout).not.toContain('"msg":"listening"');
  });
});

describe('gateway keys', () => {
  it('with no key configured, generates one, prints it once on stderr, and it works', async () => {
    const { cli, port } = await serve();
    const matches = [...cli.stderr.matchAll(/x-gateway-api-key: (\S+)/g)];
    expect(matches).toHaveLength(1);
    const key = matches[0]![1]!;
    expect(key.length).toBeGreaterThanOrEqual(16);

    const ok = await modelsWith(port, key);
    expect(ok.status).not.toBe(401);
    expect(ok.status).toBe(400);
    expect(JSON.parse(ok.body).error.code).toBe('missing_provider');

    const bad = await modelsWith(port, OTHER_KEY);
    expect(bad.status).toBe(401);

    const none = await httpRequest(port, { path: '/v1/models' });
    expect(none.status).toBe(401);

    // Requests are logged after the response closes; wait for both lines, then check the log.
    await cli.waitFor('request log lines', () => (cli.logs.filter((l) => l.msg === 'request').length >= 3 ? true : undefined));
    expect(cli.stdout).not.toContain(key);
    // Still printed exactly once after traffic.
    expect(cli.stderr.split(key).length - 1).toBe(1);
  });

  it('GATEWAY_API_KEYS: every listed key works, others do not, nothing is generated', async () => {
    const { cli, port } = await serve([], { GATEWAY_API_KEYS: `${KEY_A}, ${KEY_B}` });
    for (const k of [KEY_A, KEY_B]) {
      const r = await modelsWith(port, k);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body).error.code).toBe('missing_provider');
    }
    expect((await modelsWith(port, OTHER_KEY)).status).toBe(401);
    expect(cli.stderr).not.toContain('x-gateway-api-key');
    expect(cli.stderr).not.toContain('Generated');
  });

  it('a GATEWAY_API_KEYS key shorter than 16 characters is refused at start, without echoing it', async () => {
    const cli = await runToExit(['serve', '--port', String(await freePort())], { GATEWAY_API_KEYS: `${KEY_A},tooshort` });
    expect(cli.exit.code).not.toBe(0);
    expect(cli.exit.code).not.toBeNull();
    expect(cli.stderr).toContain('--api-keys[1] (GATEWAY_API_KEYS)');
    expect(cli.stderr).toContain('at least 16 characters');
    expect(cli.stderr).not.toContain('tooshort');
  });

  it('--api-keys flag wins over GATEWAY_API_KEYS', async () => {
    const { port } = await serve(['--api-keys', KEY_B], { GATEWAY_API_KEYS: KEY_A });
    expect((await modelsWith(port, KEY_B)).status).toBe(400);
    expect((await modelsWith(port, KEY_A)).status).toBe(401);
  });
});

describe('bootstrap file', () => {
  function writeBootstrap(text: string): string {
    const file = join(tempDir(), 'bootstrap.yaml');
    writeFileSync(file, text);
    return file;
  }

  it('api_keys with ${ENV} interpolation work; no key is generated', async () => {
    const file = writeBootstrap(`api_keys:\n  - name: ops\n    key: \${SLUICE_CLI_TEST_KEY}\n  - name: fixed\n    key: ${KEY_B}\n`);
    const { cli, port } = await serve(['--bootstrap', file], { SLUICE_CLI_TEST_KEY: KEY_A });
    expect((await modelsWith(port, KEY_A)).status).toBe(400);
    expect((await modelsWith(port, KEY_B)).status).toBe(400);
    // The literal placeholder is not a key.
    expect((await modelsWith(port, '${SLUICE_CLI_TEST_KEY}')).status).toBe(401);
    expect((await modelsWith(port, OTHER_KEY)).status).toBe(401);
    expect(cli.stderr).not.toContain('x-gateway-api-key');
  });

  it('GATEWAY_BOOTSTRAP env names the file too', async () => {
    const file = writeBootstrap(`api_keys:\n  - name: ops\n    key: ${KEY_A}\n`);
    const { port } = await serve([], { GATEWAY_BOOTSTRAP: file });
    expect((await modelsWith(port, KEY_A)).status).toBe(400);
  });

  it('an invalid custom_host exits non-zero naming the field', async () => {
    const file = writeBootstrap(`virtual_keys:\n  x:\n    provider: openai\n    custom_host: not a url\n`);
    const cli = await runToExit(['serve', '--port', String(await freePort()), '--bootstrap', file]);
    expect(cli.exit.code).not.toBe(0);
    expect(cli.exit.code).not.toBeNull();
    expect(cli.stderr).toContain('virtual_keys.x.custom_host');
    expect(cli.stderr).toContain(file);
    expect(cli.stdout).not.toContain('"msg":"listening"');
  });

  it('an unknown key exits non-zero naming it', async () => {
    const file = writeBootstrap(`api_keys: []\nvirtual_kyes: {}\n`);
    const cli = await runToExit(['serve', '--port', String(await freePort()), '--bootstrap', file]);
    expect(cli.exit.code).not.toBe(0);
    expect(cli.exit.code).not.toBeNull();
    expect(cli.stderr).toContain('virtual_kyes');
  });

  it('a short api key exits non-zero naming the entry', async () => {
    const file = writeBootstrap(`api_keys:\n  - name: a\n    key: short\n`);
    const cli = await runToExit(['serve', '--port', String(await freePort()), '--bootstrap', file]);
    expect(cli.exit.code).not.toBe(0);
    expect(cli.stderr).toContain('api_keys[0].key');
  });

  it('a missing environment variable is named', async () => {
    const file = writeBootstrap(`api_keys:\n  - name: a\n    key: \${SLUICE_CLI_TEST_UNSET_VAR}\n`);
    const cli = await runToExit(['serve', '--port', String(await freePort()), '--bootstrap', file]);
    expect(cli.exit.code).not.toBe(0);
    expect(cli.exit.code).not.toBeNull();
    expect(cli.stderr).toContain('SLUICE_CLI_TEST_UNSET_VAR');
    expect(cli.stderr).toContain('api_keys[0].key');
  });

  it('a missing file exits non-zero naming it', async () => {
    const missing = join(tempDir(), 'nope.yaml');
    const cli = await runToExit(['serve', '--port', String(await freePort()), '--bootstrap', missing]);
    expect(cli.exit.code).not.toBe(0);
    expect(cli.stderr).toContain(missing);
  });
});

describe('saved configs (--pipelines)', () => {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await FakeOpenAI.start();
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('an invalid config file exits non-zero naming the file and the field', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'good.json'), JSON.stringify({ provider: 'openai', api_key: 'x' }));
    writeFileSync(join(dir, 'broken.json'), JSON.stringify({ provider: 'openai', custom_host: 'nope' }));
    const cli = await runToExit(['serve', '--port', String(await freePort()), '--pipelines', dir], { GATEWAY_API_KEYS: KEY_A });
    expect(cli.exit.code).not.toBe(0);
    expect(cli.exit.code).not.toBeNull();
    expect(cli.stderr).toContain(join(dir, 'broken.json'));
    expect(cli.stderr).toContain('custom_host');
    expect(cli.stdout).not.toContain('"msg":"listening"');
  });

  it('a file that is not JSON exits non-zero naming it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'garbled.json'), '{"provider": ');
    const cli = await runToExit(['serve', '--port', String(await freePort()), '--pipelines', dir], { GATEWAY_API_KEYS: KEY_A });
    expect(cli.exit.code).not.toBe(0);
    expect(cli.stderr).toContain(join(dir, 'garbled.json'));
  });

  it('a loopback custom_host without GATEWAY_TRUSTED_HOSTS is refused at start, naming the config', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'local.json'), JSON.stringify({ provider: 'openai', custom_host: fake.baseUrl, api_key: 'x' }));
    const cli = await runToExit(['serve', '--port', String(await freePort()), '--pipelines', dir], { GATEWAY_API_KEYS: KEY_A });
    expect(cli.exit.code).not.toBe(0);
    expect(cli.stderr).toContain('local');
    expect(cli.stderr).toContain('GATEWAY_TRUSTED_HOSTS');
  });

  it('a missing explicit pipelines directory exits non-zero naming it', async () => {
    const missing = join(tempDir(), 'no-such-dir');
    const cli = await runToExit(['serve', '--port', String(await freePort()), '--pipelines', missing], { GATEWAY_API_KEYS: KEY_A });
    expect(cli.exit.code).not.toBe(0);
    expect(cli.stderr).toContain(missing);
  });

  it('a valid config is usable by id end to end', async () => {
    fake.reset();
    const dir = tempDir();
    writeFileSync(
      join(dir, 'local-openai.json'),
      JSON.stringify({ provider: 'openai', custom_host: fake.baseUrl, api_key: 'sk-upstream-secret' }),
    );
    const { cli, port } = await serve(['--pipelines', dir], { GATEWAY_API_KEYS: KEY_A, GATEWAY_TRUSTED_HOSTS: '127.0.0.1' });
    const r = await httpRequest(port, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'x-gateway-api-key': KEY_A, 'x-gateway-config': 'local-openai', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(r.status, r.body).toBe(200);
    const body = JSON.parse(r.body);
    expect(body.object).toBe('chat.completion');
    expect(typeof body.choices[0].message.content).toBe('string');
    const reqs = await fake.waitForRequests(1, 2000);
    expect(reqs[0]!.path).toBe('/v1/chat/completions');
    expect(reqs[0]!.headers.authorization).toBe('Bearer sk-upstream-secret');

    const unknown = await httpRequest(port, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'x-gateway-api-key': KEY_A, 'x-gateway-config': 'no-such-id', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error.code).toBe('config_not_found');
    await cli.waitFor('request log lines', () => (cli.logs.filter((l) => l.msg === 'request').length >= 2 ? true : undefined));
    expect(cli.stdout).not.toContain('sk-upstream-secret');
  });
});

describe('port and host precedence', () => {
  it('PORT and HOST from the environment are used', async () => {
    const port = await freePort();
    const cli = run(['serve'], { PORT: String(port), HOST: '127.0.0.1', GATEWAY_API_KEYS: KEY_A });
    const line = (await cli.listening())[0]!;
    expect(line.port).toBe(port);
    expect(line.address).toBe('127.0.0.1');
    expect((await httpRequest(port, { path: '/health' })).status).toBe(200);
  });

  it('--port and --host win over PORT and HOST', async () => {
    const envPort = await freePort();
    const flagPort = await freePort();
    expect(flagPort).not.toBe(envPort);
    const cli = run(['serve', '--port', String(flagPort), '--host', '127.0.0.1'], {
      PORT: String(envPort),
      HOST: '0.0.0.0',
      GATEWAY_API_KEYS: KEY_A,
    });
    const line = (await cli.listening())[0]!;
    expect(line.port).toBe(flagPort);
    expect(line.address).toBe('127.0.0.1');
    expect((await httpRequest(flagPort, { path: '/health' })).status).toBe(200);
    expect(await canConnect(envPort)).toBe(false);
  });

  it('a port already in use exits non-zero with a message', async () => {
    const { port } = await serve([], { GATEWAY_API_KEYS: KEY_A });
    const second = await runToExit(['serve', '--port', String(port)], { GATEWAY_API_KEYS: KEY_A });
    expect(second.exit.code).not.toBe(0);
    expect(second.exit.code).not.toBeNull();
    expect(second.stderr).toContain(`cannot listen on 127.0.0.1:${port}: port ${port} is in use (EADDRINUSE); pass --port N or set PORT`);
  });

  it('a host that is not an address of this machine names --host and HOST', async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never assigned to a machine, so binding it fails locally.
    const port = await freePort();
    const cli = await runToExit(['serve', '--port', String(port), '--host', '192.0.2.1'], { GATEWAY_API_KEYS: KEY_A });
    expect(cli.exit.code).toBe(2);
    expect(cli.stderr).toContain(`cannot listen on 192.0.2.1:${port}: 192.0.2.1 is not an address of this machine (EADDRNOTAVAIL); pass --host ADDRESS or set HOST`);
  });

  it('a port taken through PORT says the same', async () => {
    const { port } = await serve([], { GATEWAY_API_KEYS: KEY_A });
    const second = await runToExit(['serve'], { PORT: String(port), GATEWAY_API_KEYS: KEY_A });
    expect(second.exit.code).toBe(2);
    expect(second.stderr).toContain(`port ${port} is in use (EADDRINUSE); pass --port N or set PORT`);
  });
});

describe('SIGTERM', () => {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await FakeOpenAI.start();
  });
  afterAll(async () => {
    await fake?.close();
  });

  function chatConfig(): string {
    return JSON.stringify({ provider: 'openai', custom_host: fake.baseUrl, api_key: 'sk-upstream' });
  }

  /** A streaming chat request on its own connection; resolves `firstChunk` on the first body bytes. */
  function streamingChat(port: number): {
    firstChunk: Promise<void>;
    done: Promise<{ status: number; body: string; complete: boolean }>;
    closed: Promise<{ error?: Error }>;
    destroy(): void;
  } {
    let onFirst!: () => void;
    let failFirst!: (e: Error) => void;
    const firstChunk = new Promise<void>((res, rej) => {
      onFirst = res;
      failFirst = rej;
    });
    firstChunk.catch(() => undefined);
    let resolveClosed!: (v: { error?: Error }) => void;
    const closed = new Promise<{ error?: Error }>((res) => (resolveClosed = res));
    let req!: http.ClientRequest;
    const done = new Promise<{ status: number; body: string; complete: boolean }>((res, rej) => {
      req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/chat/completions',
          agent: false,
          headers: { 'x-gateway-api-key': KEY_A, 'x-gateway-config': chatConfig(), 'content-type': 'application/json' },
        },
        (r) => {
          let body = '';
          r.setEncoding('utf8');
          r.on('data', (d: string) => {
            body += d;
            onFirst();
          });
          r.on('end', () => res({ status: r.statusCode ?? 0, body, complete: r.complete }));
          r.on('error', (e) => rej(e));
          r.on('aborted', () => rej(new Error('response aborted')));
        },
      );
      req.on('error', (e) => {
        failFirst(e);
        rej(e);
        resolveClosed({ error: e });
      });
      req.on('close', () => resolveClosed({}));
      req.end(JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }));
    });
    done.catch(() => undefined);
    return { firstChunk, done, closed, destroy: () => req.destroy() };
  }

  function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      p,
      new Promise<never>((_, rej) => {
        timer = setTimeout(() => rej(new Error(`${what} did not happen within ${ms}ms`)), ms);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  it('drains (no drain delay): the in-flight stream completes, new connections are refused, exit code 0', async () => {
    fake.reset();
    // role chunk, 2 pieces, finish chunk, [DONE]: 5 frames, 100 ms apart.
    const frames = sseFrames(chatChunks(['Hello', ' world']));
    expect(frames).toHaveLength(5);
    fake.enqueue('/v1/chat/completions', { stream: { frames, gapMs: 100 } });

    const { cli, port } = await serve(['--shutdown-timeout', '5000', '--drain-delay', '0'], {
      GATEWAY_API_KEYS: KEY_A,
      GATEWAY_TRUSTED_HOSTS: '127.0.0.1',
    });
    const stream = streamingChat(port);
    await within(stream.firstChunk, 5000, 'the first stream chunk');
    const signalledAt = Date.now();
    expect(cli.child.kill('SIGTERM')).toBe(true);
    await cli.waitFor('the "shutting down" log line', () => cli.logs.find((l) => l.msg === 'shutting down'), 3000);
    expect(cli.exit).toBeUndefined();

    // The log line is written just before the listener closes (same tick, but the log write may land
    // first), so allow a moment for the close; it must happen long before the stream ends.
    const refusedBy = Date.now() + 1000;
    while ((await canConnect(port)) && Date.now() < refusedBy) await new Promise((r) => setTimeout(r, 20));
    // During the drain: a fresh connection is refused, /ready on one is 503 or refused.
    expect(await canConnect(port)).toBe(false);
    const ready = await httpRequest(port, { path: '/ready', timeoutMs: 2000 }).then(
      (r) => r.status,
      (e: NodeJS.ErrnoException) => e.code,
    );
    expect([503, 'ECONNREFUSED']).toContain(ready);
    expect(cli.exit).toBeUndefined();

    const result = await within(stream.done, 5000, 'the stream end');
    expect(result.status).toBe(200);
    expect(result.complete).toBe(true);
    expect(result.body).toContain('Hello');
    expect(result.body).toContain(' world');
    expect(result.body.trimEnd().endsWith('data: [DONE]')).toBe(true);

    const exit = await cli.waitExit(5000);
    expect(exit).toEqual({ code: 0, signal: null });
    // Drained, not cut by the 5 s deadline.
    expect(Date.now() - signalledAt).toBeLessThan(4000);
    expect(cli.logs.some((l) => l.msg === 'stopped')).toBe(true);
    expect(cli.logs.some((l) => l.msg === 'shutdown deadline reached; closing remaining connections')).toBe(false);
  });

  it('SIGTERM keeps accepting for --drain-delay with /ready 503 on a new connection, then exits 0', async () => {
    const { cli, port } = await serve(['--shutdown-timeout', '5000', '--drain-delay', '600'], { GATEWAY_API_KEYS: KEY_A });
    const t0 = Date.now();
    cli.child.kill('SIGTERM');
    await cli.waitFor('the "shutting down" log line', () => cli.logs.find((l) => l.msg === 'shutting down'), 3000);
    const ready = await httpRequest(port, { path: '/ready', timeoutMs: 2000 });
    expect(ready.status).toBe(503);
    expect(Date.now() - t0).toBeLessThan(600);
    const exit = await cli.waitExit(4000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(600);
  });

  it('an idle server exits 0 promptly on SIGINT (no drain delay)', async () => {
    const { cli, port } = await serve(['--shutdown-timeout', '5000'], { GATEWAY_API_KEYS: KEY_A });
    expect((await httpRequest(port, { path: '/ready' })).status).toBe(200);
    const t0 = Date.now();
    cli.child.kill('SIGINT');
    const exit = await cli.waitExit(4000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('deadline: a hanging upstream does not hold the process past --shutdown-timeout; the client gets 503 shutting_down', async () => {
    fake.reset();
    fake.enqueue('/v1/chat/completions', { hang: true });
    const { cli, port } = await serve(['--shutdown-timeout', '300', '--drain-delay', '0'], {
      GATEWAY_API_KEYS: KEY_A,
      GATEWAY_TRUSTED_HOSTS: '127.0.0.1',
    });
    const stream = streamingChat(port);
    const [upstream] = await fake.waitForRequests(1, 5000);
    const t0 = Date.now();
    cli.child.kill('SIGTERM');
    const exit = await cli.waitExit(4000);
    const elapsed = Date.now() - t0;
    expect(exit.signal).toBeNull();
    expect(exit.code).toBe(0);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3000);
    // The waiting request was answered (not left open, not reset): 503 shutting_down.
    await within(stream.closed, 2000, 'the client connection close');
    const answer = await stream.done;
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'shutting_down' } });
    // And the upstream call was abandoned rather than left hanging.
    await within(upstream!.closed, 2000, 'the upstream request close');
    expect(upstream!.aborted).toBe(true);
    expect(cli.logs.some((l) => l.msg === 'shutdown deadline reached; closing remaining connections')).toBe(true);
  });
});

describe('npm start', () => {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await FakeOpenAI.start();
  });
  afterAll(async () => {
    await fake?.close();
  });

  /** The parent pid of `pid` (Linux /proc), or undefined where there is no /proc. */
  function parentOf(pid: number): number | undefined {
    try {
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return undefined;
    }
  }

  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('runs the built server as npm\'s own child; SIGTERM to npm drains it: the held request is answered and the whole tree exits 0', async () => {
    fake.reset();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    fake.enqueue('/v1/chat/completions', async () => {
      await held;
      return { json: { id: 'chatcmpl-held', object: 'chat.completion', created: 0, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'answered while draining' }, finish_reason: 'stop' }] } };
    });
    const port = await freePort();
    const npm = GatewayProcess.command(
      'npm',
      ['start', '--', '--port', String(port), '--drain-delay', '0', '--shutdown-timeout', '20000', '--pipelines', workDir],
      { GATEWAY_API_KEYS: KEY_A, GATEWAY_TRUSTED_HOSTS: '127.0.0.1' },
      ROOT,
    );
    children.add(npm);
    let serverPid = 0;
    try {
      // dist/ was built in beforeAll, so the prestart check has nothing to build.
      const line = (await npm.listening(1, 30_000))[0]!;
      serverPid = line.pid;
      expect(npm.stderr).not.toContain('building once');
      // No shell between npm and the server: npm forwards SIGTERM to its child, and that child is it.
      expect(serverPid).not.toBe(npm.pid);
      const parent = parentOf(serverPid);
      if (parent !== undefined) expect(parent).toBe(npm.pid);

      const answer = httpRequest(port, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: {
          'x-gateway-api-key': KEY_A,
          'x-gateway-config': JSON.stringify({ provider: 'openai', custom_host: fake.baseUrl, api_key: 'sk-upstream' }),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hold on' }] }),
        timeoutMs: 20_000,
      });
      answer.catch(() => undefined);
      await fake.waitForRequests(1, 10_000);

      expect(npm.child.kill('SIGTERM')).toBe(true);
      await npm.logLine('the "shutting down" log line', (l) => l.msg === 'shutting down' && l.signal === 'SIGTERM', 10_000);
      expect(npm.exit).toBeUndefined();
      release();

      const reply = await answer;
      expect(reply.status, reply.body).toBe(200);
      expect(JSON.parse(reply.body).choices[0].message.content).toBe('answered while draining');
      expect(await npm.waitExit(20_000)).toEqual({ code: 0, signal: null });
      expect(npm.logs.some((l) => l.msg === 'stopped')).toBe(true);
      expect(alive(serverPid)).toBe(false);
    } finally {
      release();
      if (serverPid && alive(serverPid)) process.kill(serverPid, 'SIGKILL');
    }
  }, 90_000);
});
