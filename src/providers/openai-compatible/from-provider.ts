import { GatewayError } from '../../errors/gateway-error.js';
import type { JsonResult, ProviderRequest, StreamChunk, StreamEvent, StreamStep, Usage } from '../types.js';
import type { OpenAIQuirks } from './descriptors.js';
import { mapFinishReasons, valueAt } from './quirks.js';

function readUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const o = u as Record<string, unknown>;
  const p = typeof o.prompt_tokens === 'number' ? o.prompt_tokens : 0;
  const c = typeof o.completion_tokens === 'number' ? o.completion_tokens : 0;
  const t = typeof o.total_tokens === 'number' ? o.total_tokens : p + c;
  const usage: Usage = { prompt_tokens: p, completion_tokens: c, total_tokens: t };
  const d = o.prompt_tokens_details as Record<string, unknown> | null | undefined;
  if (d && typeof d === 'object') {
    const details: NonNullable<Usage['prompt_tokens_details']> = {};
    if (typeof d.cached_tokens === 'number') details.cached_tokens = d.cached_tokens;
    if (typeof d.cache_write_tokens === 'number') details.cache_write_tokens = d.cache_write_tokens;
    if (details.cached_tokens !== undefined || details.cache_write_tokens !== undefined) usage.prompt_tokens_details = details;
  }
  // Hosts that count cache hits in a field of their own (DeepSeek's prompt_cache_hit_tokens).
  if (usage.prompt_tokens_details?.cached_tokens === undefined && typeof o.prompt_cache_hit_tokens === 'number') {
    usage.prompt_tokens_details = { ...usage.prompt_tokens_details, cached_tokens: o.prompt_cache_hit_tokens };
  }
  return usage;
}

/** 2xx JSON body → result. The text is parsed once; it is sent back verbatim (finish reasons mapped when the host has its own). */
export function fromOpenAIJson(_req: ProviderRequest, text: string, quirks?: OpenAIQuirks): JsonResult {
  if (quirks?.finishReasons) text = mapFinishReasons(text, quirks.finishReasons);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new GatewayError('upstream_invalid_response', 'The provider returned a body that is not JSON.');
  }
  if (!body || typeof body !== 'object') {
    throw new GatewayError('upstream_invalid_response', 'The provider returned JSON that is not an object.');
  }
  return { body, raw: text, usage: readUsage((body as Record<string, unknown>).usage) };
}

function pickHeader(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Non-2xx → GatewayError with the upstream status and the provider's message. */
export function fromOpenAIError(
  status: number,
  text: string,
  headers: Record<string, string | string[] | undefined>,
): GatewayError {
  let message = `The provider answered ${status}.`;
  let code: string | null = null;
  let type: string | undefined;
  let param: string | null = null;
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const err = (parsed.error ?? parsed) as Record<string, unknown> | string;
    if (typeof err === 'string') message = err;
    else if (err && typeof err === 'object') {
      if (typeof err.message === 'string') message = err.message;
      if (typeof err.code === 'string' || typeof err.code === 'number') code = String(err.code);
      if (typeof err.type === 'string') type = err.type;
      if (typeof err.param === 'string') param = err.param;
    }
  } catch {
    if (text.length > 0) message = text.slice(0, 500);
  }
  const out: Record<string, string> = {};
  for (const h of ['retry-after', 'retry-after-ms', 'x-should-retry']) {
    const v = pickHeader(headers, h);
    if (v !== undefined) out[h] = v;
  }
  return new GatewayError('upstream_error', message, {
    status: status >= 400 && status <= 599 ? status : 502,
    upstreamCode: code,
    upstreamType: type,
    param,
    headers: out,
  });
}

export interface OpenAIStreamState {
  /** The client did not ask for usage (or said `include_usage: false`); we asked, so the usage-only chunk is hidden. */
  hideUsageChunk: boolean;
  done: boolean;
  /** The host's quirks that shape its chunks (other places for usage, its own finish reasons). */
  quirks?: OpenAIQuirks;
}

export function openAIStreamStart(req: ProviderRequest, injected: boolean, quirks?: OpenAIQuirks): OpenAIStreamState {
  const opts = req.body?.stream_options as { include_usage?: boolean } | null | undefined;
  const state: OpenAIStreamState = { hideUsageChunk: injected && opts?.include_usage !== true, done: false };
  if (quirks && (quirks.usageAt || quirks.finishReasons)) state.quirks = quirks;
  return state;
}

/** Usage in a chunk: its `usage` (on any chunk, not only a `choices: []` one), else where the host's quirks say. */
function chunkUsage(parsed: Record<string, unknown>, quirks: OpenAIQuirks | undefined): Usage | undefined {
  if (parsed.usage) return readUsage(parsed.usage);
  if (quirks?.usageAt) {
    for (const path of quirks.usageAt) {
      const u = valueAt(parsed, path);
      if (u) return readUsage(u);
    }
  }
  return undefined;
}

/** One upstream stream event → chunks for the client. Pure reducer. */
export function fromOpenAIStreamEvent(state: OpenAIStreamState, ev: StreamEvent): StreamStep<OpenAIStreamState> {
  const data = ev.data;
  if (data === '[DONE]') return { state: { ...state, done: true }, chunks: [], done: true };
  const streamError = (): GatewayError => {
    const e = fromOpenAIError(502, data, {});
    return new GatewayError('upstream_error', e.message, { status: 502, upstreamCode: e.upstreamCode });
  };
  // An `event: error` is the provider's error even when its data is not JSON.
  if (ev.event === 'error') throw streamError();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(data) as Record<string, unknown>;
  } catch {
    throw new GatewayError('upstream_invalid_response', 'The provider sent a stream event that is not JSON.');
  }
  if (!parsed || typeof parsed !== 'object') {
    throw new GatewayError('upstream_invalid_response', 'The provider sent a stream event that is not a JSON object.');
  }
  if ('error' in parsed && parsed.error) throw streamError();
  const quirks = state.quirks;
  const usage = chunkUsage(parsed, quirks);
  const choices = parsed.choices as unknown[] | undefined;
  if (usage && state.hideUsageChunk && Array.isArray(choices) && choices.length === 0) {
    // The usage-only chunk we asked for: keep the numbers, do not show the chunk.
    return { state, chunks: [{ data: '', usage }] };
  }
  const out = quirks?.finishReasons ? mapFinishReasons(data, quirks.finishReasons) : data;
  const chunk: StreamChunk = usage ? { data: out, usage } : { data: out };
  return { state, chunks: [chunk] };
}

export function openAIStreamEnd(state: OpenAIStreamState): StreamChunk[] {
  if (!state.done) throw new GatewayError('stream_interrupted');
  return [];
}
