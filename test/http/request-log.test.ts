import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/util/log.js';
import { hooksSummary, requestLogWriter, type HookLogEntry, type RequestLogSource } from '../../src/http/request-log.js';

function sink(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, stream };
}

/** The object `Exchange.finish()` used to give `logger.info`: the reference the writer must match. */
function pinoObject(ex: RequestLogSource, latencyMs: number): Record<string, unknown> {
  const url = ex.req.url ?? '';
  const q = url.indexOf('?');
  const line: Record<string, unknown> = {
    msg: 'request',
    trace_id: ex.traceId,
    method: ex.req.method,
    path: q < 0 ? url : url.slice(0, q),
    status: ex.clientAborted ? 499 : ex.res.statusCode,
    latency_ms: latencyMs,
  };
  if (ex.settings.metadata) line.metadata = ex.settings.metadata;
  if (ex.ctx) {
    line.stream = ex.ctx.request.stream;
    if (typeof ex.ctx.request.body?.model === 'string') line.model = ex.ctx.request.body.model;
    const o = ex.ctx.outcome;
    line.attempts = o.attempts;
    if (o.usage) line.usage = o.usage;
    if (o.cost !== undefined) line.cost = o.cost;
    if (o.hooks) {
      const entry = (list: string, h: HookLogEntry) => ({ id: h.id, list, verdict: h.verdict, ...(h.deny ? { deny: true } : {}), ...(h.feedback ? { feedback: h.feedback } : {}) });
      line.hooks = [...o.hooks.before.map((h) => entry('before_request_hooks', h)), ...o.hooks.after.map((h) => entry('after_request_hooks', h))];
    }
  }
  if (ex.meta) {
    line.provider = ex.meta.provider;
    line.target = ex.meta.target;
    if (ex.meta.cacheStatus) line.cache = ex.meta.cacheStatus;
  }
  if (ex.error) line.error = { code: ex.error.code, status: ex.error.status, message: ex.error.message };
  if (ex.clientAborted) line.client_aborted = true;
  if (ex.gatewayKey) {
    line.key_name = ex.gatewayKey.name;
    line.workspace_id = ex.gatewayKey.workspace_id;
    line.organisation_id = ex.gatewayKey.organisation_id;
  }
  return line;
}

const minimal = (over: Partial<RequestLogSource> = {}): RequestLogSource => ({
  traceId: '5f0c2a1e-8d6b-4c1e-9a57-2b7d1f3e4c60',
  req: { method: 'GET', url: '/health' },
  res: { statusCode: 200 },
  settings: {},
  ctx: undefined,
  meta: undefined,
  error: undefined,
  clientAborted: false,
  gatewayKey: undefined,
  ...over,
});

const full = (over: Partial<RequestLogSource> = {}): RequestLogSource =>
  minimal({
    req: { method: 'POST', url: '/v1/chat/completions?api-version=2024-10-21&x=%22' },
    res: { statusCode: 200 },
    settings: { metadata: { team: 'search', n: 3, ok: true, none: null } },
    ctx: { request: { stream: true, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'never logged' }] } }, outcome: { attempts: 2, usage: { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 } } },
    meta: { provider: 'openai', target: 'config.targets[1]', cacheStatus: 'SEMANTIC_HIT' },
    clientAborted: true,
    gatewayKey: { name: 'team-search', workspace_id: 'ws-search', organisation_id: 'org-1' },
    ...over,
  });

/** Escapes pino handles on its own (short, no control characters) rather than through JSON.stringify. */
const printable = 'q"uote b\\ack é € 😀 \u2028 </script> \'';
/** With control characters, which pino hands to JSON.stringify. */
const odd = 'q"uote b\\ack\nnew\rret\ttab \u0000\u001f\u007f é ü € 😀 \u2028\u2029 </script>';

const cases: [string, RequestLogSource, number][] = [
  ['all fields', full(), 123.456789],
  ['only the required fields', minimal(), 0.8],
  ['no method, empty url', minimal({ req: {} }), 1],
  ['context without usage, meta without cache', full({ ctx: { request: { stream: false }, outcome: { attempts: 0 } }, meta: { provider: 'anthropic', target: 'config' } }), 5],
  [
    'metadata with quotes, backslashes, newlines, unicode and nested objects',
    full({
      settings: {
        metadata: {
          [odd]: odd,
          nested: { a: [1, 'two', { three: odd }], empty: {}, list: [] },
          long: 'x'.repeat(300) + '"' + 'y'.repeat(300),
          num: -0.000001,
          big: 1e21,
        },
      },
    }),
    42,
  ],
  ['trace id with odd characters', minimal({ traceId: odd }), 2],
  ['trace id and key name with quotes, backslashes and unicode', full({ traceId: printable, gatewayKey: { name: printable } }), 2],
  ['long trace id and key name', full({ traceId: 'ab"c'.repeat(40), gatewayKey: { name: 'k\\'.repeat(60) } }), 2],
  ['key name with odd characters', full({ gatewayKey: { name: odd } }), 2],
  ['workspace, organisation and model with odd characters', full({ gatewayKey: { name: 'k', workspace_id: odd, organisation_id: printable }, ctx: { request: { stream: false, body: { model: odd } }, outcome: { attempts: 1 } } }), 2],
  ['a model that is not a string is not written', full({ ctx: { request: { stream: false, body: { model: { odd } } }, outcome: { attempts: 1 } } }), 2],
  [
    'error',
    full({
      res: { statusCode: 502 },
      error: { code: 'upstream_error', status: 502, message: `Upstream said: ${odd}` },
      meta: undefined,
      ctx: { request: { stream: false }, outcome: { attempts: 3 } },
    }),
    1500.25,
  ],
  ['NaN latency', minimal(), Number.NaN],
  ['Infinity latency', minimal(), Number.POSITIVE_INFINITY],
  ['-Infinity latency and NaN attempts', full({ ctx: { request: { stream: true }, outcome: { attempts: Number.NaN } } }), Number.NEGATIVE_INFINITY],
  ['path with a query only', minimal({ req: { method: 'OPTIONS', url: '?a=1' } }), 3],
  ...hookCases(),
];

/** Lines with hooks: the same ids with every outcome (each has its own shared entry), feedback, odd ids. */
function hookCases(): [string, RequestLogSource, number][] {
  const withHooks = (before: HookLogEntry[], after: HookLogEntry[]) => full({ ctx: { request: { stream: false, body: { model: 'm' } }, outcome: { attempts: 1, cost: 0.0001, hooks: { before, after } } } });
  const out: [string, RequestLogSource, number][] = [];
  for (const verdict of [true, false])
    for (const deny of [true, false]) out.push([`hooks: verdict ${verdict}, deny ${deny}`, withHooks([{ id: 'h', verdict, deny }], [{ id: 'h', verdict: !verdict, deny }]), 1]);
  out.push(['hooks: only after, with feedback', withHooks([], [{ id: 'output_guardrails[0]', verdict: false, deny: false, feedback: { value: -1, weight: 0.5, metadata: { why: odd } } }, { id: 'h2', verdict: true, deny: false }]), 1]);
  out.push(['hooks: odd ids', withHooks([{ id: odd, verdict: true, deny: false }, { id: printable, verdict: false, deny: true }], []), 1]);
  out.push(['hooks: none ran', withHooks([], []), 1]);
  return out;
}

describe('request log writer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_700_000_000_123);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(cases)('writes the bytes pino writes: %s', (_name, ex, latencyMs) => {
    const viaPino = sink();
    pino({ level: 'info', base: undefined }, viaPino.stream).info(pinoObject(ex, latencyMs));
    const direct = sink();
    requestLogWriter(pino({ level: 'info', base: undefined }, direct.stream))(ex, latencyMs);
    expect(direct.lines).toHaveLength(1);
    expect(direct.lines[0]).toBe(viaPino.lines[0]);
    expect(direct.lines[0]!.endsWith('}\n')).toBe(true);
    expect(JSON.parse(direct.lines[0]!)).toMatchObject({ level: 30, time: 1_700_000_000_123, msg: 'request' });
  });

  it('hook summary entries without feedback are shared between requests and frozen (a record keeps them)', () => {
    const a = hooksSummary([{ id: 'x', verdict: true, deny: false }], [{ id: 'y', verdict: false, deny: true }]);
    const b = hooksSummary([{ id: 'x', verdict: true, deny: false }], [{ id: 'y', verdict: false, deny: true }]);
    expect(b[0]).toBe(a[0]);
    expect(b[1]).toBe(a[1]);
    expect(Object.isFrozen(a[0])).toBe(true);
    expect(a).toEqual([
      { id: 'x', list: 'before_request_hooks', verdict: true },
      { id: 'y', list: 'after_request_hooks', verdict: false, deny: true },
    ]);
    const fb = { value: 1 };
    expect(hooksSummary([{ id: 'x', verdict: true, deny: false, feedback: fb }], [])).toEqual([{ id: 'x', list: 'before_request_hooks', verdict: true, feedback: fb }]);
  });

  it('reads only the model of the body: no prompt text in the line', () => {
    const out = sink();
    requestLogWriter(pino({ base: undefined }, out.stream))(full(), 1);
    expect(out.lines[0]).toContain('"model":"gpt-4o-mini"');
    expect(out.lines[0]).not.toContain('never logged');
  });

  it('matches pino through the gateway logger (createLogger)', () => {
    const viaPino = sink();
    createLogger('info', viaPino.stream).info(pinoObject(full(), 7));
    const direct = sink();
    requestLogWriter(createLogger('info', direct.stream))(full(), 7);
    expect(direct.lines).toEqual(viaPino.lines);
  });

  it('writes nothing when the level disables info, and follows level changes at run time', () => {
    const out = sink();
    const logger = pino({ level: 'warn', base: undefined }, out.stream);
    const write = requestLogWriter(logger);
    write(full(), 1);
    expect(out.lines).toEqual([]);
    logger.level = 'info';
    write(full(), 2);
    expect(out.lines).toHaveLength(1);
    logger.level = 'silent';
    write(full(), 3);
    logger.level = 'error';
    write(full(), 4);
    expect(out.lines).toHaveLength(1);
    logger.level = 'debug';
    write(full(), 5);
    expect(out.lines.map((l) => JSON.parse(l).latency_ms)).toEqual([2, 5]);
  });

  it('escapes a lone surrogate (pino writes it raw, which UTF-8 turns into U+FFFD)', () => {
    const out = sink();
    requestLogWriter(pino({ base: undefined }, out.stream))(minimal({ traceId: 'a\ud800b' }), 1);
    expect(out.lines[0]).toContain('"trace_id":"a\\ud800b"');
    expect(JSON.parse(out.lines[0]!).trace_id).toBe('a\ud800b');
  });

  it('refuses a logger that would write the line differently', () => {
    const out = sink();
    const base = pino({ level: 'info', base: undefined }, out.stream);
    expect(() => requestLogWriter(base.child({ service: 'x' }))).toThrow(/default line format/);
    expect(() => requestLogWriter(pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, out.stream))).toThrow();
    expect(() => requestLogWriter(pino({ base: undefined, formatters: { level: (label) => ({ level: label }) } }, out.stream))).toThrow();
    expect(() => requestLogWriter(pino({ base: undefined, redact: ['key_name'] }, out.stream))).toThrow();
    expect(() => requestLogWriter(pino({ base: { pid: 1 } }, out.stream))).toThrow();
    expect(() => requestLogWriter(pino({ base: undefined, mixin: () => ({ a: 1 }) }, out.stream))).toThrow();
    expect(out.lines).toEqual([]);
  });
});
