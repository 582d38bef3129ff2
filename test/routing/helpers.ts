/**
 * Helpers shared by the routing and metrics integration tests (not a test file itself).
 *
 * `startGateway` in test/helpers cannot pass a clock or a random source through, so this builds the
 * gateway with `createGateway` the same way, plus `now` / `random`.
 */
import { Writable } from 'node:stream';
import { request } from 'undici';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { readOptions } from '../../src/config/options.js';
import { createLogger } from '../../src/log.js';
import type { FakeOpenAI } from '../fakes/openai-server.js';
import { jsonOrUndefined } from '../helpers/json.js';

export const GATEWAY_KEY = 'sk-test-routing-gateway-key-0123';
export const PROVIDER_KEY = 'sk-provider-secret-routing-9f3a';

export interface RoutingGateway {
  url: string;
  gateway: Gateway;
  logText(): string;
  close(): Promise<void>;
}

export interface RoutingGatewayOptions {
  options?: Record<string, string>;
  now?: () => number;
  random?: () => number;
}

export async function startRoutingGateway(o: RoutingGatewayOptions = {}): Promise<RoutingGateway> {
  const options = readOptions(
    { 'api-keys': GATEWAY_KEY, 'trusted-hosts': '127.0.0.1', 'log-level': 'info', port: '0', ...o.options },
    {},
  );
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const gateway = createGateway({
    options,
    logger: createLogger(options['log-level'], sink),
    savedConfigs: new Map(),
    ...(o.now ? { now: o.now } : {}),
    ...(o.random ? { random: o.random } : {}),
  });
  const addr = await gateway.listen(0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${addr.port}`,
    gateway,
    logText: () => lines.join('\n'),
    close: () => gateway.shutdown(1000),
  };
}

/** A manual clock in ms. */
export class FakeClock {
  constructor(public t = 1_700_000_000_000) {}
  readonly now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

/** A config target that reaches `fake` as provider openai. */
export function target(fake: FakeOpenAI, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { provider: 'openai', custom_host: fake.baseUrl, api_key: PROVIDER_KEY, ...extra };
}

export const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
export const STREAM_CHAT = { ...CHAT, stream: true };

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** POST /v1/chat/completions through the gateway with `config` in x-gateway-config. */
export async function chat(
  gw: RoutingGateway,
  config: unknown,
  opts: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'x-gateway-api-key': GATEWAY_KEY,
      'content-type': 'application/json',
      'x-gateway-config': JSON.stringify(config),
      ...opts.headers,
    },
    body: JSON.stringify(opts.body ?? CHAT),
  });
  const text = await res.body.text();
  const json = jsonOrUndefined(text);
  return { status: res.statusCode, headers: res.headers, text, json };
}

export { chatContent, parseSse, type SseFrame } from '../helpers/sse.js';

/** A promise with its resolve handle, to hold a fake's answer until the test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}
