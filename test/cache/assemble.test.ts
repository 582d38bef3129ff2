import { describe, expect, it } from 'vitest';
import { chunksToJson, jsonToChunks } from '../../src/cache/assemble.js';

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'gpt-4o-mini' };
const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({ ...base, choices, ...extra });

describe('chunksToJson: chat', () => {
  it('takes the role, concatenates content across chunks and keeps finish_reason, id, model and created', () => {
    const out = chunksToJson('chat', [
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'Hel' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'lo, ' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'world' }, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
    ]);
    expect(out).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello, world' }, logprobs: null, finish_reason: 'stop' }],
    });
  });

  it('keeps the role a delta gives', () => {
    const out = chunksToJson('chat', [chunk([{ index: 0, delta: { role: 'tool', content: 'x' }, finish_reason: 'stop' }])]);
    expect(out.choices[0].message.role).toBe('tool');
  });

  it('assembles several choices by index, sorted, whatever order their chunks come in', () => {
    const out = chunksToJson('chat', [
      chunk([{ index: 1, delta: { role: 'assistant', content: 'B' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { role: 'assistant', content: 'A' }, finish_reason: null }]),
      chunk([
        { index: 0, delta: { content: '1' }, finish_reason: null },
        { index: 1, delta: { content: '2' }, finish_reason: null },
      ]),
      chunk([{ index: 1, delta: {}, finish_reason: 'length' }]),
      chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
    ]);
    expect(out.choices.map((c: any) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'A1', 'stop'],
      [1, 'B2', 'length'],
    ]);
  });

  it('concatenates tool_call fragments per index, keeps id and name, and content is null when only tool calls', () => {
    const out = chunksToJson('chat', [
      chunk([{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }, finish_reason: null }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, finish_reason: null }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz"' } }] }, finish_reason: null }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, finish_reason: null }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: ':"UTC"}' } }] }, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
    ]);
    const msg = out.choices[0].message;
    expect(msg.content).toBeNull();
    expect(msg.tool_calls).toEqual([
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } },
    ]);
    expect(out.choices[0].finish_reason).toBe('tool_calls');
  });

  it('keeps content next to tool calls when there is some', () => {
    const out = chunksToJson('chat', [
      chunk([{ index: 0, delta: { role: 'assistant', content: 'Let me check.' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }]),
    ]);
    expect(out.choices[0].message.content).toBe('Let me check.');
    expect(out.choices[0].message.tool_calls).toHaveLength(1);
  });

  it('takes usage from the usage chunk (choices empty) and system_fingerprint from the first chunk', () => {
    const usage = { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 };
    const out = chunksToJson('chat', [
      chunk([{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }], { system_fingerprint: 'fp_1' }),
      chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
      chunk([], { usage }),
    ]);
    expect(out.usage).toEqual(usage);
    expect(out.system_fingerprint).toBe('fp_1');
    expect(out.choices).toHaveLength(1);
    expect(out.choices[0].message.content).toBe('Hi');
  });

  it('has no usage key when no chunk carries usage', () => {
    const out = chunksToJson('chat', [chunk([{ index: 0, delta: { content: 'Hi' }, finish_reason: 'stop' }])]);
    expect('usage' in out).toBe(false);
  });
});

describe('chunksToJson: completions', () => {
  it('concatenates text per choice and keeps finish_reason and usage', () => {
    const b = { id: 'cmpl-1', object: 'text_completion', created: 1, model: 'gpt-3.5-turbo-instruct' };
    const usage = { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 };
    const out = chunksToJson('completions', [
      { ...b, choices: [{ index: 0, text: 'Once', logprobs: null, finish_reason: null }] },
      { ...b, choices: [{ index: 0, text: ' upon', logprobs: null, finish_reason: null }] },
      { ...b, choices: [{ index: 0, text: ' a time', logprobs: null, finish_reason: 'length' }] },
      { ...b, choices: [], usage },
    ]);
    expect(out).toEqual({
      id: 'cmpl-1',
      object: 'text_completion',
      created: 1,
      model: 'gpt-3.5-turbo-instruct',
      choices: [{ index: 0, text: 'Once upon a time', logprobs: null, finish_reason: 'length' }],
      usage,
    });
  });
});

describe('jsonToChunks → chunksToJson round trip', () => {
  it('a chat completion keeps content, finish_reason and usage', () => {
    const body = {
      id: 'chatcmpl-9',
      object: 'chat.completion',
      created: 1700000001,
      model: 'gpt-4o',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'First answer' }, logprobs: null, finish_reason: 'stop' },
        { index: 1, message: { role: 'assistant', content: 'Second' }, logprobs: null, finish_reason: 'length' },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
    };
    const chunks = jsonToChunks('chat', body);
    for (const c of chunks) expect(c.object).toBe('chat.completion.chunk');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: body.usage });
    const back = chunksToJson('chat', chunks);
    expect(back).toEqual(body);
  });

  it('a chat completion with tool calls only keeps them and content null', () => {
    const body = {
      id: 'chatcmpl-t',
      object: 'chat.completion',
      created: 2,
      model: 'gpt-4o',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
    };
    expect(chunksToJson('chat', jsonToChunks('chat', body))).toEqual(body);
  });

  it('a text completion keeps text, finish_reason and usage', () => {
    const body = {
      id: 'cmpl-9',
      object: 'text_completion',
      created: 3,
      model: 'gpt-3.5-turbo-instruct',
      choices: [{ index: 0, text: 'Roses are red', logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
    };
    const chunks = jsonToChunks('completions', body);
    for (const c of chunks) expect(c.object).toBe('text_completion');
    expect(chunksToJson('completions', chunks)).toEqual(body);
  });
});
