import { describe, expect, it } from 'vitest';
import { keepAllowed, OPENAI_SHAPES, strictOpenAI } from '../../src/operators/strict-openai.js';
import type { AnswerMeta, GatewayEvent } from '../../src/upstream/events.js';
import { newScheduler, upstreamError } from '../helpers/marbles.js';

const meta: AnswerMeta = { provider: 'azure-like', target: 'config', retries: 0 };

/** A chat completion carrying the extras of several hosts. */
const COMPLETION = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  system_fingerprint: 'fp',
  prompt_filter_results: [{ prompt_index: 0, content_filter_results: { hate: { filtered: false } } }],
  x_groq: { id: 'req_1' },
  choices: [
    {
      index: 0,
      finish_reason: 'tool_calls',
      native_finish_reason: 'tool_use',
      stop_reason: null,
      content_filter_results: { hate: { filtered: false } },
      logprobs: null,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        reasoning_content: 'thinking',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}', extra: 1 }, extra: 2 }],
        annotations: [{ type: 'url_citation', url_citation: { url: 'https://example.com', start_index: 0, end_index: 1, title: 't' } }],
      },
    },
  ],
  usage: {
    prompt_tokens: 10,
    completion_tokens: 2,
    total_tokens: 12,
    prompt_cache_hit_tokens: 8,
    prompt_tokens_details: { cached_tokens: 8, cache_write_tokens: 2 },
    completion_tokens_details: { reasoning_tokens: 1 },
  },
};

const STRICT_COMPLETION = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  system_fingerprint: 'fp',
  choices: [
    {
      index: 0,
      finish_reason: 'tool_calls',
      logprobs: null,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        annotations: [{ type: 'url_citation', url_citation: { url: 'https://example.com', start_index: 0, end_index: 1, title: 't' } }],
      },
    },
  ],
  usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, prompt_tokens_details: { cached_tokens: 8 }, completion_tokens_details: { reasoning_tokens: 1 } },
};

describe('keepAllowed', () => {
  it('keeps exactly OpenAI\'s fields of a chat completion', () => {
    const before = structuredClone(COMPLETION);
    expect(keepAllowed(COMPLETION, OPENAI_SHAPES['chat.completion'])).toEqual(STRICT_COMPLETION);
    expect(COMPLETION).toEqual(before);
  });

  it('an OpenAI object passes unchanged (nothing of OpenAI\'s own is lost)', () => {
    expect(keepAllowed(STRICT_COMPLETION, OPENAI_SHAPES['chat.completion'])).toEqual(STRICT_COMPLETION);
  });

  it('strips chunk extras (the Azure prompt-filter chunk keeps only OpenAI fields)', () => {
    const chunk = {
      id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', x_groq: { usage: { prompt_tokens: 1 } },
      choices: [{ index: 0, delta: { content: 'a', reasoning_content: 'r', tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '' } }] }, finish_reason: null, content_filter_results: {} }],
      usage: null,
    };
    expect(keepAllowed(chunk, OPENAI_SHAPES['chat.completion.chunk'])).toEqual({
      id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm',
      choices: [{ index: 0, delta: { content: 'a', tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '' } }] }, finish_reason: null }],
      usage: null,
    });
    expect(keepAllowed({ choices: [], prompt_filter_results: [{}] }, OPENAI_SHAPES['chat.completion.chunk'])).toEqual({ choices: [] });
  });

  it('text completions, embeddings and model lists', () => {
    expect(keepAllowed({ object: 'text_completion', choices: [{ text: 'a', index: 0, finish_reason: 'stop', logprobs: null, stop_reason: 'x' }], extra: 1 }, OPENAI_SHAPES.text_completion)).toEqual({
      object: 'text_completion',
      choices: [{ text: 'a', index: 0, finish_reason: 'stop', logprobs: null }],
    });
    expect(keepAllowed({ object: 'list', model: 'e', data: [{ object: 'embedding', index: 0, embedding: 'AAAA', norm: 1 }], usage: { prompt_tokens: 1, total_tokens: 1, x: 1 }, id: 'e1' }, OPENAI_SHAPES.embeddings)).toEqual({
      object: 'list', model: 'e', data: [{ object: 'embedding', index: 0, embedding: 'AAAA' }], usage: { prompt_tokens: 1, total_tokens: 1 },
    });
    expect(keepAllowed({ object: 'list', data: [{ id: 'm', object: 'model', created: 1, owned_by: 'o', context_length: 8 }] }, OPENAI_SHAPES.models)).toEqual({
      object: 'list', data: [{ id: 'm', object: 'model', created: 1, owned_by: 'o' }],
    });
  });
});

describe('strictOpenAI', () => {
  it('a JSON answer: body filtered, raw text dropped (it would be sent verbatim)', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const src = cold<GatewayEvent>('a|', { a: { type: 'json', status: 200, body: COMPLETION, raw: JSON.stringify(COMPLETION), meta } });
      expectObservable(src.pipe(strictOpenAI({ endpoint: 'chat', stream: false }))).toBe('a|', { a: { type: 'json', status: 200, body: STRICT_COMPLETION, meta } });
    });
  });

  it('a stream: each chunk filtered, usage numbers kept, hidden usage chunks and errors pass', () => {
    const raw = '{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi","reasoning_content":"r"},"finish_reason":null}],"x_groq":{"id":"q"}}';
    const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
    newScheduler().run(({ cold, expectObservable }) => {
      const src = cold<GatewayEvent>('s-a-b-#', { s: { type: 'stream-start', meta }, a: { type: 'chunk', data: raw, usage }, b: { type: 'chunk', data: '', usage } }, upstreamError(502));
      expectObservable(src.pipe(strictOpenAI({ endpoint: 'chat', stream: true }))).toBe(
        's-a-b-#',
        {
          s: { type: 'stream-start', meta },
          a: { type: 'chunk', data: '{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}', usage },
          b: { type: 'chunk', data: '', usage },
        },
        upstreamError(502),
      );
    });
  });
});
