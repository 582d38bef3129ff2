/** The OpenAI-compatible catalog: entries and their quirks as data, unit by unit. */
import { describe, expect, it } from 'vitest';
import { OPENAI_COMPATIBLE, type OpenAIQuirks } from '../../src/providers/openai-compatible/descriptors.js';
import { fromOpenAIJson, fromOpenAIStreamEvent, openAIStreamStart } from '../../src/providers/openai-compatible/from-provider.js';
import { applyRequestQuirks, mapFinishReasons, stableToolCallId } from '../../src/providers/openai-compatible/quirks.js';
import { ProviderRegistry, defaultProviders } from '../../src/providers/registry.js';
import type { ProviderRequest } from '../../src/providers/types.js';

const reg = new ProviderRegistry(defaultProviders());

describe('catalog entries', () => {
  it.each([
    ['groq', 'https://api.groq.com/openai/v1'],
    ['mistral', 'https://api.mistral.ai/v1'],
    ['together', 'https://api.together.xyz/v1'],
    ['fireworks', 'https://api.fireworks.ai/inference/v1'],
    ['deepseek', 'https://api.deepseek.com/v1'],
    ['openrouter', 'https://openrouter.ai/api/v1'],
    ['perplexity', 'https://api.perplexity.ai'],
    ['xai', 'https://api.x.ai/v1'],
    ['cerebras', 'https://api.cerebras.ai/v1'],
  ])('%s → %s, Bearer auth', (id, url) => {
    const p = reg.get(id);
    expect(reg.baseUrl(p, { provider: id })).toBe(url);
    expect(p.descriptor.auth).toEqual({ header: 'authorization', scheme: 'Bearer' });
    const up = p.toProvider({ endpoint: 'chat', body: { model: 'm', messages: [] }, stream: false, headers: {} }, { provider: id, api_key: 'k' }, url);
    expect(up.headers.authorization).toBe('Bearer k');
    expect(up.origin + up.path).toBe(`${url}/chat/completions`);
  });

  it.each(['vllm', 'ollama', 'lmstudio', 'openai-compatible'])('%s is its own id and needs a custom_host', (id) => {
    const p = reg.get(id);
    expect(p.descriptor.id).toBe(id);
    expect(() => reg.baseUrl(p, { provider: id })).toThrow(/needs a custom_host/);
  });

  it('an endpoint a host lacks is a 400 naming the provider and the endpoint', () => {
    const p = reg.get('perplexity');
    expect(() => p.toProvider({ endpoint: 'embeddings', body: { model: 'm', input: 'x' }, stream: false, headers: {} }, { provider: 'perplexity', api_key: 'k' }, 'https://api.perplexity.ai')).toThrow(
      /perplexity does not serve embeddings/,
    );
  });

  it('every entry accepts the same fields: key, custom host, vendor organization/project', () => {
    for (const d of OPENAI_COMPATIBLE) expect([...d.fields.names].sort()).toEqual(['api_key', 'custom_host', 'vendor_organization', 'vendor_project']);
  });
});

describe('applyRequestQuirks', () => {
  const body = { model: 'm', seed: 1, max_completion_tokens: 9, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'x' }] };

  it('returns the very same object when no quirk applies (nothing allocated)', () => {
    expect(applyRequestQuirks(body, undefined)).toBe(body);
    expect(applyRequestQuirks(body, { dropAssistantFields: ['reasoning_content'] })).toBe(body);
    expect(applyRequestQuirks(body, { renameFields: { top_k: 'k' } })).toBe(body);
  });

  it('renames and drops top-level fields without touching the input', () => {
    const q: OpenAIQuirks = { renameFields: { seed: 'random_seed', max_completion_tokens: 'max_tokens' }, dropFields: ['stream_options'] };
    const copy = structuredClone(body);
    expect(applyRequestQuirks(body, q)).toEqual({ model: 'm', random_seed: 1, max_tokens: 9, messages: body.messages });
    expect(body).toEqual(copy);
  });

  it('the host name wins when the client sent both', () => {
    expect(applyRequestQuirks({ seed: 1, random_seed: 2 }, { renameFields: { seed: 'random_seed' } })).toEqual({ random_seed: 2 });
  });

  it('rewrites foreign tool-call ids consistently and keeps valid ones', () => {
    const q: OpenAIQuirks = { toolCallIds: { pattern: /^[a-zA-Z0-9]{9}$/, length: 9 } };
    const out = applyRequestQuirks(
      {
        messages: [
          { role: 'assistant', tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 'ok1234567', type: 'function', function: { name: 'g', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'call_abc', content: '1' },
          { role: 'tool', tool_call_id: 'ok1234567', content: '2' },
        ],
      },
      q,
    ) as { messages: any[] };
    const mapped = stableToolCallId('call_abc', 9);
    expect(mapped).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(out.messages[0].tool_calls.map((c: { id: string }) => c.id)).toEqual([mapped, 'ok1234567']);
    expect(out.messages[1].tool_call_id).toBe(mapped);
    expect(out.messages[2].tool_call_id).toBe('ok1234567');
    expect(stableToolCallId('call_abc', 9)).toBe(mapped);
    expect(stableToolCallId('call_abd', 9)).not.toBe(mapped);
  });

  it('drops refused fields from assistant messages only', () => {
    const out = applyRequestQuirks(
      { messages: [{ role: 'user', content: 'a', reasoning_content: 'kept: not an assistant message' }, { role: 'assistant', content: 'b', reasoning_content: 'r' }] },
      { dropAssistantFields: ['reasoning_content'] },
    );
    expect(out.messages).toEqual([{ role: 'user', content: 'a', reasoning_content: 'kept: not an assistant message' }, { role: 'assistant', content: 'b' }]);
  });
});

describe('response quirks', () => {
  const req: ProviderRequest = { endpoint: 'chat', body: { model: 'm', messages: [] }, stream: true, headers: {} };

  it('maps finish reasons in raw text, spaced or compact, and leaves other text alone', () => {
    const map = { model_length: 'length' };
    expect(mapFinishReasons('{"finish_reason":"model_length"}', map)).toBe('{"finish_reason":"length"}');
    expect(mapFinishReasons('{"finish_reason" : "model_length"}', map)).toBe('{"finish_reason":"length"}');
    const text = '{"content":"model_length","finish_reason":"stop"}';
    expect(mapFinishReasons(text, map)).toBe(text);
    expect(fromOpenAIJson(req, '{"choices":[{"finish_reason":"model_length"}]}', { finishReasons: map }).body).toEqual({ choices: [{ finish_reason: 'length' }] });
  });

  it('reads usage from any chunk, and from the quirk paths', () => {
    const s = openAIStreamStart(req, false, { usageAt: [['x_groq', 'usage']] });
    const onContent = fromOpenAIStreamEvent(s, { data: '{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}' });
    expect(onContent.chunks[0]!.usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    const legacy = fromOpenAIStreamEvent(s, { data: '{"choices":[],"x_groq":{"usage":{"prompt_tokens":4,"completion_tokens":5,"total_tokens":9}}}' });
    expect(legacy.chunks[0]!.usage).toEqual({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 });
    expect(fromOpenAIStreamEvent(s, { data: '{"choices":[],"x_groq":{"id":"r"}}' }).chunks[0]!.usage).toBeUndefined();
  });

  it('reads prompt_cache_hit_tokens as cached tokens when the host has no prompt_tokens_details', () => {
    const r = fromOpenAIJson(req, '{"usage":{"prompt_tokens":20,"completion_tokens":1,"prompt_cache_hit_tokens":16}}');
    expect(r.usage?.prompt_tokens_details).toEqual({ cached_tokens: 16 });
    const own = fromOpenAIJson(req, '{"usage":{"prompt_tokens":20,"completion_tokens":1,"prompt_cache_hit_tokens":16,"prompt_tokens_details":{"cached_tokens":3}}}');
    expect(own.usage?.prompt_tokens_details).toEqual({ cached_tokens: 3 });
  });
});
