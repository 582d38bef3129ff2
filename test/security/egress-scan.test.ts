/**
 * One egress, kept so: a scan of src/ for every way code can open an outbound connection or send an
 * HTTP request. Each way is allowed only in the files listed here, which all go through the egress
 * dispatcher (src/security/egress.ts) and its host guard. A new outbound call elsewhere fails this
 * test, naming the file and the line; the fix is to use the egress (a provider call through
 * callUpstream, a token endpoint through PrepareContext.fetch, a check's URL through CheckHttp), not
 * to widen the list. A listed file that no longer matches fails too, so the list cannot go stale.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../../src');

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

interface Rule {
  what: string;
  pattern: RegExp;
  /** Files (relative to src/) where it is allowed, and why. */
  allowed: Record<string, string>;
}

const RULES: Rule[] = [
  {
    what: 'a value imported from undici (clients, agents, fetch, request)',
    pattern: /import\s+(?!type\s)[^;]*?from\s+'undici'|import\(\s*'undici'\s*\)/,
    allowed: { 'security/egress.ts': 'the egress itself: its Agent, connector and fetch' },
  },
  {
    what: 'an undici dispatcher or connector made',
    pattern: /new\s+(?:Agent|Pool|Client|ProxyAgent|EnvHttpProxyAgent|RetryAgent)\s*\(|buildConnector\s*\(/,
    allowed: { 'security/egress.ts': 'the one guarded dispatcher' },
  },
  {
    what: 'a request sent on a dispatcher',
    pattern: /\.request\(\s*\{/,
    allowed: {
      'upstream/call.ts': 'provider calls, on the dispatcher handed in (the egress one)',
      'checks/http.ts': "the checks' client, on the egress dispatcher",
    },
  },
  {
    what: 'fetch (global, or undici\'s)',
    pattern: /(?<![.\w]|async\s)fetch\s*\(|globalThis\.fetch|\bundiciFetch\s*\(/,
    allowed: { 'security/egress.ts': 'the egress fetch (token endpoints): URL checked, no redirects' },
  },
  {
    what: "node's own HTTP, TLS or socket clients",
    pattern: /(?<![.\w])(?:net|tls)\.(?:connect|createConnection)\s*\(|(?<![.\w])https?\.(?:request|get)\s*\(|from\s+'node:(?:https|http2|tls|dgram)'|new\s+WebSocket\s*\(/,
    allowed: {},
  },
  {
    what: "node's http module as a value (a server, never a client)",
    pattern: /import\s+(?!type\s)[^;]*?from\s+'node:http'/,
    allowed: { 'compose/server.ts': 'the HTTP server', 'demo/fake-provider.ts': "the quickstart's echo server" },
  },
  {
    what: 'DNS resolution',
    pattern: /from\s+'node:dns'|from\s+'dns'/,
    allowed: { 'security/host-guard.ts': "the guard's resolver, which checks every address" },
  },
  {
    what: 'a module loaded by require (which this scan could not follow)',
    pattern: /createRequire\s*\(/,
    allowed: {
      'state/redis/connection.ts': 'ioredis, loaded on first use: the operator-configured Redis, not a request destination',
      'pricing/input-tokens.ts': "gpt-tokenizer's encoding tables, loaded on first use: no I/O",
    },
  },
];

const files = walk(SRC).map((f) => relative(SRC, f).split('\\').join('/'));
const text = new Map(files.map((f) => [f, readFileSync(join(SRC, f), 'utf8')]));

/** `file:line: text` of every line of `file` matching `re`. */
function hits(file: string, re: RegExp): string[] {
  return text
    .get(file)!
    .split('\n')
    .flatMap((line, i) => (re.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

describe('one egress: outbound calls only through src/security/egress.ts', () => {
  it.each(RULES.map((r) => [r.what, r] as const))('%s: only in the listed files', (_what, rule) => {
    const outside = files.filter((f) => rule.allowed[f] === undefined).flatMap((f) => hits(f, rule.pattern));
    expect(outside, `use the egress (src/security/egress.ts) instead of: ${rule.what}`).toEqual([]);
  });

  it.each(RULES.flatMap((r) => Object.keys(r.allowed).map((f) => [f, r.what, r] as const)))('%s still has %s (the list is not stale)', (file, _what, rule) => {
    expect(text.has(file), `${file} is gone: remove it from the list`).toBe(true);
    expect(hits(file, rule.pattern).length).toBeGreaterThan(0);
  });

  it('the scan sees what it looks for (a planted line of each kind is caught)', () => {
    const planted: [rule: number, line: string][] = [
      [0, "import { request } from 'undici';"],
      [0, "const { Agent } = await import('undici');"],
      [1, 'const a = new Agent({});'],
      [2, 'await dispatcher.request({ origin });'],
      [3, "await fetch('http://x/');"],
      [3, "globalThis.fetch('http://x/');"],
      [4, "net.connect({ host: 'x' });"],
      [4, "http.get('http://x/');"],
      [4, "import { get } from 'node:https';"],
      [5, "import http from 'node:http';"],
      [6, "import dns from 'node:dns';"],
      [7, 'const r = createRequire(import.meta.url);'],
    ];
    for (const [i, line] of planted) expect(RULES[i]!.pattern.test(line), `${RULES[i]!.what}: ${line}`).toBe(true);
    expect(new Set(planted.map(([i]) => i)).size).toBe(RULES.length);
    // Type-only imports and method calls named fetch are not outbound calls.
    expect(RULES[0]!.pattern.test("import type { Dispatcher } from 'undici';")).toBe(false);
    expect(RULES[3]!.pattern.test('this.fetch(uri)')).toBe(false);
    expect(RULES[3]!.pattern.test('ctx.fetch(uri)')).toBe(false);
    expect(RULES[4]!.pattern.test('await deps.http.request(url, {})')).toBe(false);
  });

  it('the composition root builds the one egress and hands its dispatcher to providers and checks', () => {
    const providers = text.get('compose/providers.ts')!;
    expect(providers).toMatch(/const egress = createEgress\(hostGuard,/);
    const pipeline = text.get('compose/pipeline.ts')!;
    expect(pipeline).toMatch(/createCheckDeps\(hostGuard, \{[^}]*dispatcher: egress\.dispatcher/);
    expect(pipeline).toMatch(/dispatcher: egress\.dispatcher,/);
    expect(pipeline).toMatch(/fetch: egress\.fetch,/);
  });
});
