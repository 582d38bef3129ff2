import { z } from 'zod';
import { formatPath } from './issues.js';

/** Server options: each has a CLI flag and an environment variable; the flag wins. */
export const OPTION_TABLE = [
  { flag: 'port', env: 'PORT', help: 'port to listen on', def: '8787' },
  { flag: 'host', env: 'HOST', help: 'address to bind (0.0.0.0 for every interface)', def: '127.0.0.1' },
  { flag: 'bootstrap', env: 'GATEWAY_BOOTSTRAP', help: 'YAML file declaring gateway keys, virtual keys, provider base URLs, usage limits, prompts, prices, context windows and the semantic cache\'s embeddings; read at start' },
  { flag: 'pipelines', env: 'GATEWAY_PIPELINES_DIR', help: 'directory of saved configs (<id>.json)', def: 'pipelines' },
  { flag: 'api-keys', env: 'GATEWAY_API_KEYS', help: 'comma list of gateway keys (x-gateway-api-key)' },
  { flag: 'trusted-hosts', env: 'GATEWAY_TRUSTED_HOSTS', help: 'hosts/CIDRs any outbound call may reach inside private networks (custom_host, provider base URLs, token, webhook, JWKS and log URLs)' },
  { flag: 'provider-base-urls', env: 'GATEWAY_PROVIDER_BASE_URLS', help: 'override provider base URLs: openai=http://proxy/v1,...' },
  { flag: 'body-limit', env: 'GATEWAY_BODY_LIMIT', help: 'largest request body in bytes (or 16mb, 512kb)', def: '16mb' },
  { flag: 'shutdown-timeout', env: 'GATEWAY_SHUTDOWN_TIMEOUT', help: 'ms from SIGTERM/SIGINT until unfinished requests are ended (drain delay included)', def: '10000' },
  { flag: 'drain-delay', env: 'GATEWAY_DRAIN_DELAY', help: 'ms after SIGTERM that new connections are still accepted (/ready 503), within --shutdown-timeout; SIGINT skips it', def: '5000' },
  { flag: 'client-headers-timeout', env: 'GATEWAY_CLIENT_HEADERS_TIMEOUT', help: 'ms a client connection may take to send a request\'s headers (or anything at all)', def: '20000' },
  { flag: 'client-body-timeout', env: 'GATEWAY_CLIENT_BODY_TIMEOUT', help: 'ms a client may take to send a whole request, headers and body; the response is not limited', def: '60000' },
  { flag: 'keep-alive-timeout', env: 'GATEWAY_KEEP_ALIVE_TIMEOUT', help: 'ms an idle keep-alive client connection is kept (Node adds 1 s)', def: '65000' },
  { flag: 'stream-idle-timeout', env: 'GATEWAY_STREAM_IDLE_TIMEOUT', help: 'ms a stream may wait for its first or next chunk (504 upstream_timeout), not counting time its client holds it back; also the longest its client may take nothing', def: '120000' },
  { flag: 'upstream-timeout', env: 'GATEWAY_UPSTREAM_TIMEOUT', help: 'ms to wait for a provider\'s response headers (504 upstream_timeout)', def: '120000' },
  { flag: 'request-budget', env: 'GATEWAY_REQUEST_BUDGET', help: 'ms a request may take in all, retries and their waits included', def: '600000' },
  { flag: 'upstream-max-body', env: 'GATEWAY_UPSTREAM_MAX_BODY', help: 'largest provider answer body read (or 32mb); over it the call is aborted (502 upstream_response_too_large)', def: '32mb' },
  { flag: 'upstream-max-event', env: 'GATEWAY_UPSTREAM_MAX_EVENT', help: 'largest single stream event or AWS event-stream frame from a provider (or 4mb); over it the call is aborted (502 upstream_response_too_large)', def: '4mb' },
  { flag: 'template-max-steps', env: 'GATEWAY_TEMPLATE_MAX_STEPS', help: 'most steps (text pieces, values, section items) rendering one request\'s prompt template may take (400 template_too_large)', def: '100000' },
  { flag: 'template-max-output', env: 'GATEWAY_TEMPLATE_MAX_OUTPUT', help: 'most characters one request\'s prompt template may render (or 1mb) (400 template_too_large)', def: '1mb' },
  { flag: 'redis', env: 'REDIS_URL', help: 'redis://host:port/db: keep state in Redis (keys, virtual keys, guardrails, prompts, policies, usage counters, request logs, cache, breakers), shared by every gateway process; else it lives in memory' },
  { flag: 'redis-optional', env: 'GATEWAY_REDIS_OPTIONAL', help: 'true: start degraded (local state) when Redis is down at start', def: 'false' },
  { flag: 'cache-max-bytes', env: 'GATEWAY_CACHE_MAX_BYTES', help: 'memory cache bound (LRU) when Redis is not used', def: '64mb' },
  { flag: 'cache-ttl', env: 'GATEWAY_CACHE_TTL', help: 'seconds a cached answer lives when the config sets no max_age', def: '86400' },
  { flag: 'request-log-size', env: 'GATEWAY_REQUEST_LOG_SIZE', help: 'request records kept for GET /v1/logs (memory ring, or the Redis stream\'s cap)', def: '10000' },
  { flag: 'response-max-bytes', env: 'GATEWAY_RESPONSE_MAX_BYTES', help: 'memory bound (LRU) of stored responses (GET /v1/responses/:id) when Redis is not used', def: '64mb' },
  { flag: 'response-ttl', env: 'GATEWAY_RESPONSE_TTL', help: 'seconds a stored response (POST /v1/responses with store) is kept, in memory or Redis', def: '2592000' },
  { flag: 'background-max', env: 'GATEWAY_BACKGROUND_MAX', help: 'background responses (background: true) running at once in this process; beyond: 429', def: '100' },
  { flag: 'background-max-per-key', env: 'GATEWAY_BACKGROUND_MAX_PER_KEY', help: 'background responses one gateway key may run at once in this process; beyond: 429', def: '10' },
  {
    flag: 'usage-limits-on-store-error',
    env: 'GATEWAY_USAGE_LIMITS_ON_STORE_ERROR',
    help: 'when the usage counters (Redis) cannot be reached: closed = requests under a usage-limit policy get 503; open = admitted unchecked, with a warning',
    def: 'closed',
  },
  { flag: 'usage-limit-alert-webhook', env: 'GATEWAY_USAGE_LIMIT_ALERT_WEBHOOK', help: 'http(s) URL each usage-limit alert is POSTed to (JSON; through the custom_host guard; 5 s limit)' },
  { flag: 'otlp-endpoint', env: 'GATEWAY_OTLP_ENDPOINT', help: 'http(s) URL of an OTLP/HTTP traces receiver (e.g. http://collector:4318/v1/traces): turns tracing on, one span per request and per upstream attempt, sent as JSON through the egress guard (a private host needs --trusted-hosts); unset: tracing off' },
  { flag: 'otlp-export-delay', env: 'GATEWAY_OTLP_EXPORT_DELAY', help: 'ms between two exports of the spans batched so far (with --otlp-endpoint)', def: '5000' },
  { flag: 'semantic-threshold', env: 'GATEWAY_SEMANTIC_THRESHOLD', help: 'cosine similarity a semantic cache hit needs', def: '0.95' },
  { flag: 'check-url-lookups', env: 'GATEWAY_CHECK_URL_LOOKUPS', help: 'true: the validUrls check may resolve and fetch URLs (through the host guard); else syntax only', def: 'false' },
  { flag: 'workers', env: 'GATEWAY_WORKERS', help: 'processes to run on this machine (node:cluster)', def: '1' },
  { flag: 'log-level', env: 'LOG_LEVEL', help: 'fatal, error, warn, info, debug, trace or silent', def: 'info' },
  {
    flag: 'heap-growth',
    env: 'GATEWAY_HEAP_GROWTH',
    help: '% (0-1000) the V8 heap may grow over its live size between full GCs; 0: V8 decides (up to 300%)',
    def: '50',
  },
] as const;

const ms = z.coerce.number().int().positive();
const msOrZero = z.string().regex(/^\d+$/, 'must be whole milliseconds').transform(Number).pipe(z.number().int().min(0));
const list = z
  .string()
  .optional()
  .transform((s) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : []));
const bytes = z
  .string()
  .regex(/^\d+(\s*(b|kb|mb|gb))?$/i, 'use a number of bytes or a size like 512kb, 16mb')
  .transform((s) => {
    const m = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(s)!;
    const mult = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? 'b').toLowerCase() as 'b'];
    return Number(m[1]) * mult;
  });

export const OptionsSchema = z.object({
  // Digits only: Number('') and Number(' ') are 0, which would silently mean "any free port".
  port: z
    .string()
    .regex(/^\d+$/, 'must be a port number (0-65535)')
    .transform(Number)
    .pipe(z.number().int().min(0).max(65535)),
  host: z.string().min(1),
  bootstrap: z.string().optional(),
  pipelines: z.string().min(1),
  'api-keys': list.pipe(z.array(z.string().min(16, 'a gateway key must be at least 16 characters'))),
  'trusted-hosts': list,
  'provider-base-urls': list.transform((items, ctx) => {
    const out: Record<string, string> = {};
    for (const item of items) {
      const i = item.indexOf('=');
      if (i <= 0) {
        ctx.addIssue({ code: 'custom', message: `"${item}" is not provider=url` });
        continue;
      }
      out[item.slice(0, i)] = item.slice(i + 1);
    }
    return out;
  }),
  'body-limit': bytes,
  'shutdown-timeout': ms,
  'drain-delay': msOrZero,
  'client-headers-timeout': ms,
  'client-body-timeout': ms,
  'keep-alive-timeout': ms,
  'stream-idle-timeout': ms,
  'upstream-timeout': ms,
  'request-budget': ms,
  'upstream-max-body': bytes.pipe(z.number().int().min(1024, 'must be at least 1kb')),
  'upstream-max-event': bytes.pipe(z.number().int().min(1024, 'must be at least 1kb')),
  'template-max-steps': z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(1)),
  'template-max-output': bytes.pipe(z.number().int().min(1)),
  redis: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).optional(),
  'redis-optional': z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true'),
  'cache-max-bytes': bytes,
  'cache-ttl': z.string().regex(/^\d+$/, 'must be whole seconds').transform(Number).pipe(z.number().int().positive()),
  'request-log-size': z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(1).max(100_000)),
  'response-max-bytes': bytes.pipe(z.number().int().min(1024, 'must be at least 1kb')),
  'response-ttl': z.string().regex(/^\d+$/, 'must be whole seconds').transform(Number).pipe(z.number().int().positive()),
  'background-max': z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(0)),
  'background-max-per-key': z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(0)),
  'usage-limits-on-store-error': z.enum(['open', 'closed'], { error: 'must be open or closed' }),
  'usage-limit-alert-webhook': z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  'otlp-endpoint': z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  'otlp-export-delay': ms,
  'semantic-threshold': z.coerce.number().gt(0).max(1),
  'check-url-lookups': z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true'),
  workers: z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(1).max(64)),
  'log-level': z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  'heap-growth': z.string().regex(/^\d+$/, 'must be a whole percentage').transform(Number).pipe(z.number().int().min(0).max(1000)),
})
  // Node's http server refuses a headers timeout longer than its request timeout.
  .refine((o) => o['client-headers-timeout'] <= o['client-body-timeout'], {
    path: ['client-headers-timeout'],
    message: 'must not be longer than --client-body-timeout (which covers the headers too)',
  });
export type ServerOptions = z.output<typeof OptionsSchema>;

/** CLI values over environment over defaults; throws an Error naming the bad option. */
export function readOptions(cli: Record<string, string | undefined>, env: NodeJS.ProcessEnv): ServerOptions {
  const raw: Record<string, string | undefined> = {};
  // An empty environment variable (`PORT=` in an env file) counts as unset.
  for (const o of OPTION_TABLE) raw[o.flag] = cli[o.flag] ?? (env[o.env] || undefined) ?? ('def' in o ? o.def : undefined);
  const r = OptionsSchema.safeParse(raw);
  if (!r.success) {
    const lines = r.error.issues.map((i) => {
      const flag = String(i.path[0] ?? '');
      const o = OPTION_TABLE.find((x) => x.flag === flag);
      return `  --${formatPath(i.path as (string | number)[])}${o ? ` (${o.env})` : ''}: ${i.message}`;
    });
    throw new Error(`invalid options:\n${lines.join('\n')}`);
  }
  return r.data;
}

/** `text` in lines of at most `width` characters (a longer word stays whole), the first unindented. */
function wrap(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join(`\n${indent}`);
}

/** `sluice serve --help`: one column for the flags, as wide as the longest, descriptions wrapped at 100. */
export function helpText(): string {
  const left = (o: { flag: string }): string => `  --${o.flag} <value>`;
  const column = Math.max(...OPTION_TABLE.map((o) => left(o).length)) + 2;
  const indent = ' '.repeat(column);
  const width = Math.max(40, 100 - column);
  const rows = OPTION_TABLE.map((o) => {
    const env = `env ${o.env}${'def' in o ? `, default ${o.def}` : ''}`;
    return `${left(o).padEnd(column)}${wrap(o.help, width, indent)}\n${indent}${env}`;
  });
  return `Usage: sluice serve [options]\n\nRuns the Sluice AI gateway. Each option can also be set by its environment variable; the flag wins.\n\nOptions:\n${rows.join('\n')}\n${'  -h, --help'.padEnd(column)}show this help\n`;
}
