/**
 * What a scenario is: one request shape, sent by wrk to every contender (the minimal proxy, the
 * gateway, and with --against the gateway built from another ref). The scenarios are
 * benchmarks/scenarios/<id>.ts, listed in benchmarks/scenarios/index.ts.
 */
export const API_KEY = 'sk-sluice-bench-0123456789abcdef';
export const CHAT_BODY = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]}';
export const STREAM_BODY = '{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hello"}]}';

/** What a scenario is given to prepare one gateway process. */
export interface GatewayContext {
  /** The fake upstream's origin, http://127.0.0.1:PORT. */
  upstream: string;
  /** 0 for the gateway under test, 1 for the ref's: both run at once, so state they keep apart (a Redis db each) is keyed by it. */
  slot: number;
  /** A directory for this gateway's files, removed at the end. */
  dir: string;
}

/** A gateway's answer to the scenario's request, as the smoke check sees it. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface Request {
  headers: Record<string, string>;
  body: string;
  /** The gateway's path for it; default CHAT_PATH (the minimal proxy is always sent CHAT_PATH). */
  path?: string;
}

export const CHAT_PATH = '/v1/chat/completions';

export interface Scenario {
  id: string;
  /** One sentence: what the request does. */
  title: string;
  /** POST with these headers and body (on its `path`, default /v1/chat/completions), to every contender. */
  request(upstream: string): Request;
  /** Extra environment of a gateway process, prepared (files, Redis) before it starts. */
  gatewayEnv?(ctx: GatewayContext): Promise<Record<string, string>>;
  /**
   * Checks a gateway's second answer to the request before anything is timed (the first has primed
   * caches): what is wrong, or undefined. The default check is a 200.
   */
  check?(answer: Answer, ctx: GatewayContext): string | undefined | Promise<string | undefined>;
  /** After the scenario's runs, per gateway. */
  cleanup?(ctx: GatewayContext): Promise<void>;
}

/** Routed by headers to the fake upstream as an OpenAI provider at `customHost`. */
export function providerHeaders(customHost: string, provider = 'openai', extra: Record<string, string> = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    authorization: 'Bearer sk-bench',
    'x-gateway-api-key': API_KEY,
    'x-gateway-provider': provider,
    'x-gateway-custom-host': customHost,
    ...extra,
  };
}

/** The route given as an inline x-gateway-config only. */
export function configHeaders(config: Record<string, unknown>, apiKey = API_KEY): Record<string, string> {
  return { 'content-type': 'application/json', authorization: 'Bearer sk-bench', 'x-gateway-api-key': apiKey, 'x-gateway-config': JSON.stringify(config) };
}

/** A config target reaching the fake upstream. */
export const upstreamTarget = (upstream: string): Record<string, unknown> => ({ provider: 'openai', custom_host: `${upstream}/v1`, api_key: 'sk-bench' });

/** A stream that ends in `data: [DONE]` after `chunks` content chunks, or what is wrong with it. */
export function checkStream(a: Answer, chunks: number): string | undefined {
  const data = a.body.split('\n').filter((l) => l.startsWith('data: '));
  const texts = data.filter((l) => l.includes('"content":" tok')).length;
  if (a.status !== 200 || data[data.length - 1] !== 'data: [DONE]' || texts !== chunks - 2) {
    return `want a 200 stream of ${chunks - 2} text chunks ending in [DONE], got ${a.status} with ${texts}: ${a.body.slice(0, 300)}`;
  }
  return undefined;
}
