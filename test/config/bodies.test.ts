import { describe, expect, it } from 'vitest';
import {
  ChatCompletionBody,
  CompletionBody,
  EmbeddingsBody,
  parseBody,
  type BodyEndpoint,
} from '../../src/config/bodies.js';
import { GatewayError } from '../../src/errors/gateway-error.js';

type Path = (string | number)[];

const BASE: Record<BodyEndpoint, Record<string, unknown>> = {
  chat: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
  completions: { model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test' },
  embeddings: { model: 'text-embedding-3-small', input: 'hello' },
};

const with_ = (endpoint: BodyEndpoint, patch: Record<string, unknown>) => ({ ...BASE[endpoint], ...patch });

/** Returns the thrown GatewayError, failing the test if parseBody does not throw one. */
function rejectionOf(endpoint: BodyEndpoint, body: unknown): GatewayError {
  try {
    parseBody(endpoint, body);
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    return e as GatewayError;
  }
  throw new Error(`expected ${endpoint} body to be rejected: ${JSON.stringify(body)}`);
}

/** A case: a patch on the endpoint's base body, and either `null` (accepted) or the first bad path. */
type Case = [name: string, patch: Record<string, unknown>, badPath: Path | null];

function runCases(endpoint: BodyEndpoint, cases: Case[]) {
  it.each(cases)('%s', (_name, patch, badPath) => {
    const body = with_(endpoint, patch);
    if (badPath === null) {
      const out = parseBody(endpoint, body) as Record<string, unknown>;
      // Every field that was sent comes back with the same value.
      for (const [k, v] of Object.entries(patch)) expect(out[k]).toEqual(v);
    } else {
      const err = rejectionOf(endpoint, body);
      expect(err.status).toBe(400);
      expect(err.code).toBe('invalid_request_body');
      expect(err.issues?.[0]?.path).toEqual(badPath);
    }
  });
}

describe('ChatCompletionBody limits', () => {
  runCases('chat', [
    ['temperature 0 ok', { temperature: 0 }, null],
    ['temperature 2 ok', { temperature: 2 }, null],
    ['temperature 2.01 rejected', { temperature: 2.01 }, ['temperature']],
    ['temperature -0.01 rejected', { temperature: -0.01 }, ['temperature']],
    ['temperature null ok', { temperature: null }, null],
    ['temperature string rejected', { temperature: '1' }, ['temperature']],
    ['top_p 1 ok', { top_p: 1 }, null],
    ['top_p 1.01 rejected', { top_p: 1.01 }, ['top_p']],
    ['top_p -0.1 rejected', { top_p: -0.1 }, ['top_p']],
    ['frequency_penalty -2 ok', { frequency_penalty: -2 }, null],
    ['frequency_penalty 2 ok', { frequency_penalty: 2 }, null],
    ['frequency_penalty -2.1 rejected', { frequency_penalty: -2.1 }, ['frequency_penalty']],
    ['presence_penalty 2 ok', { presence_penalty: 2 }, null],
    ['presence_penalty 2.1 rejected', { presence_penalty: 2.1 }, ['presence_penalty']],
    ['n 1 ok', { n: 1 }, null],
    ['n 128 ok', { n: 128 }, null],
    ['n 129 rejected', { n: 129 }, ['n']],
    ['n 0 rejected', { n: 0 }, ['n']],
    ['n 1.5 rejected', { n: 1.5 }, ['n']],
    ['max_tokens 0 ok', { max_tokens: 0 }, null],
    ['max_tokens -1 rejected', { max_tokens: -1 }, ['max_tokens']],
    ['max_tokens 1.5 rejected', { max_tokens: 1.5 }, ['max_tokens']],
    ['max_completion_tokens 0 ok', { max_completion_tokens: 0 }, null],
    ['max_completion_tokens -1 rejected', { max_completion_tokens: -1 }, ['max_completion_tokens']],
    ['logprobs true ok', { logprobs: true }, null],
    ['logprobs 1 rejected (boolean in chat)', { logprobs: 1 }, ['logprobs']],
    ['top_logprobs 0 ok', { top_logprobs: 0 }, null],
    ['top_logprobs 20 ok', { top_logprobs: 20 }, null],
    ['top_logprobs 21 rejected', { top_logprobs: 21 }, ['top_logprobs']],
    ['top_logprobs -1 rejected', { top_logprobs: -1 }, ['top_logprobs']],
    ['stop string ok', { stop: '\n' }, null],
    ['stop 4 sequences ok', { stop: ['a', 'b', 'c', 'd'] }, null],
    ['stop 5 sequences rejected', { stop: ['a', 'b', 'c', 'd', 'e'] }, ['stop']],
    ['stop number rejected', { stop: 1 }, ['stop']],
    ['stop null ok', { stop: null }, null],
    ['logit_bias -100 and 100 ok', { logit_bias: { '50256': -100, '1': 100 } }, null],
    ['logit_bias value 101 rejected', { logit_bias: { '50256': 101 } }, ['logit_bias', '50256']],
    ['logit_bias value -101 rejected', { logit_bias: { '50256': -101 } }, ['logit_bias', '50256']],
    ['logit_bias key "abc" rejected', { logit_bias: { abc: 1 } }, ['logit_bias', 'abc']],
    ['seed int ok', { seed: 42 }, null],
    ['seed max safe integer ok', { seed: Number.MAX_SAFE_INTEGER }, null],
    ['seed 1.5 rejected', { seed: 1.5 }, ['seed']],
    ['stream null ok', { stream: null }, null],
    ['stream "yes" rejected', { stream: 'yes' }, ['stream']],
    ['stream_options with stream true ok', { stream: true, stream_options: { include_usage: true } }, null],
    ['stream_options without stream rejected', { stream_options: { include_usage: true } }, ['stream_options']],
    ['stream_options with stream false rejected', { stream: false, stream_options: {} }, ['stream_options']],
    ['stream_options null without stream ok', { stream_options: null }, null],
    ['user string ok', { user: 'u-1' }, null],
    ['user number rejected', { user: 1 }, ['user']],
    ['tools array of objects ok', { tools: [{ type: 'function', function: { name: 'f' } }] }, null],
    ['tools item not an object rejected', { tools: [{ type: 'function' }, 'f'] }, ['tools', 1]],
    ['tool_choice string ok', { tool_choice: 'auto' }, null],
    ['tool_choice object ok', { tool_choice: { type: 'function', function: { name: 'f' } } }, null],
    ['tool_choice number rejected', { tool_choice: 1 }, ['tool_choice']],
    ['response_format with type ok', { response_format: { type: 'json_object' } }, null],
    ['response_format without type rejected', { response_format: {} }, ['response_format', 'type']],
    ['model empty rejected', { model: '' }, ['model']],
    ['model missing rejected', { model: undefined }, ['model']],
  ]);
});

describe('ChatCompletionBody messages', () => {
  runCases('chat', [
    ['messages empty rejected', { messages: [] }, ['messages']],
    ['messages not an array rejected', { messages: 'hi' }, ['messages']],
    ['message not an object rejected', { messages: [{ role: 'user', content: 'a' }, 'b'] }, ['messages', 1]],
    ['unknown role rejected', { messages: [{ role: 'user', content: 'a' }, { role: 'bot', content: 'b' }] }, ['messages', 1, 'role']],
    ['missing role rejected', { messages: [{ content: 'a' }] }, ['messages', 0, 'role']],
    [
      'every role accepted',
      {
        messages: [
          { role: 'system', content: 's' },
          { role: 'developer', content: 'd' },
          { role: 'user', content: [{ type: 'text', text: 'u' }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', content: 'r', tool_call_id: 'c1' },
          { role: 'function', name: 'f', content: null },
        ],
      },
      null,
    ],
    ['user content missing rejected', { messages: [{ role: 'user' }] }, ['messages', 0, 'content']],
    ['system content missing rejected', { messages: [{ role: 'system' }] }, ['messages', 0, 'content']],
    ['content number rejected', { messages: [{ role: 'user', content: 5 }] }, ['messages', 0, 'content']],
    ['content object rejected', { messages: [{ role: 'user', content: { text: 'x' } }] }, ['messages', 0, 'content']],
    ['content null ok for user', { messages: [{ role: 'user', content: null }] }, null],
    ['assistant without content or calls rejected', { messages: [{ role: 'assistant' }] }, ['messages', 0, 'content']],
    ['assistant with tool_calls and no content ok', { messages: [{ role: 'assistant', tool_calls: [] }] }, null],
    [
      'assistant with function_call and no content ok',
      { messages: [{ role: 'assistant', function_call: { name: 'f', arguments: '{}' } }] },
      null,
    ],
    ['tool without tool_call_id rejected', { messages: [{ role: 'tool', content: 'r' }] }, ['messages', 0, 'tool_call_id']],
    ['tool_call_id number rejected', { messages: [{ role: 'tool', content: 'r', tool_call_id: 1 }] }, ['messages', 0, 'tool_call_id']],
  ]);
});

describe('CompletionBody limits (every limit of the completions request)', () => {
  runCases('completions', [
    ['prompt string ok', { prompt: 'hello' }, null],
    ['prompt empty string ok', { prompt: '' }, null],
    ['prompt string[] ok', { prompt: ['a', 'b'] }, null],
    ['prompt token ids ok', { prompt: [0, 1, 50256] }, null],
    ['prompt token arrays ok', { prompt: [[1, 2], [3]] }, null],
    ['prompt null ok (end-of-text default)', { prompt: null }, null],
    ['prompt missing rejected', { prompt: undefined }, ['prompt']],
    ['prompt number rejected', { prompt: 5 }, ['prompt']],
    ['prompt negative token rejected', { prompt: [1, -1] }, ['prompt', 1]],
    ['prompt fractional token rejected', { prompt: [1.5] }, ['prompt', 0]],
    ['prompt mixed string/number rejected', { prompt: ['a', 1] }, ['prompt', 1]],
    ['prompt mixed number/string rejected', { prompt: [1, 'a'] }, ['prompt', 1]],
    ['prompt bad nested token rejected', { prompt: [[1], [2, 'x']] }, ['prompt', 1, 1]],
    ['prompt nested non-array rejected', { prompt: [[1], 2] }, ['prompt', 1]],
    ['prompt array of objects rejected', { prompt: [{}] }, ['prompt', 0]],
    ['best_of 0 ok', { best_of: 0 }, null],
    ['best_of 20 ok', { best_of: 20 }, null],
    ['best_of 21 rejected', { best_of: 21 }, ['best_of']],
    ['best_of -1 rejected', { best_of: -1 }, ['best_of']],
    ['best_of null ok', { best_of: null }, null],
    ['best_of 20 with n 19 ok', { best_of: 20, n: 19 }, null],
    ['best_of 3 with n 2 ok', { best_of: 3, n: 2 }, null],
    ['best_of 2 with n 2 rejected', { best_of: 2, n: 2 }, ['best_of']],
    ['best_of 1 with n 2 rejected', { best_of: 1, n: 2 }, ['best_of']],
    ['best_of with n null ok', { best_of: 5, n: null }, null],
    ['best_of 3 with stream true rejected', { best_of: 3, stream: true }, ['best_of']],
    ['best_of 3 with stream false ok', { best_of: 3, stream: false }, null],
    ['best_of 1 with stream true ok (one candidate streams)', { best_of: 1, stream: true }, null],
    ['echo true ok', { echo: true }, null],
    ['echo null ok', { echo: null }, null],
    ['echo "true" rejected', { echo: 'true' }, ['echo']],
    ['frequency_penalty -2 ok', { frequency_penalty: -2 }, null],
    ['frequency_penalty 2.01 rejected', { frequency_penalty: 2.01 }, ['frequency_penalty']],
    ['frequency_penalty null ok', { frequency_penalty: null }, null],
    ['presence_penalty 2 ok', { presence_penalty: 2 }, null],
    ['presence_penalty -2.01 rejected', { presence_penalty: -2.01 }, ['presence_penalty']],
    ['logit_bias 100 ok', { logit_bias: { '50256': 100 } }, null],
    ['logit_bias value 101 rejected', { logit_bias: { '50256': 101 } }, ['logit_bias', '50256']],
    ['logit_bias key "abc" rejected', { logit_bias: { abc: 1 } }, ['logit_bias', 'abc']],
    ['logit_bias key "-1" rejected', { logit_bias: { '-1': 1 } }, ['logit_bias', '-1']],
    ['logprobs 0 ok', { logprobs: 0 }, null],
    ['logprobs 5 ok', { logprobs: 5 }, null],
    ['logprobs 6 rejected', { logprobs: 6 }, ['logprobs']],
    ['logprobs -1 rejected', { logprobs: -1 }, ['logprobs']],
    ['logprobs true rejected (integer in completions)', { logprobs: true }, ['logprobs']],
    ['logprobs null ok', { logprobs: null }, null],
    ['max_tokens 0 ok', { max_tokens: 0 }, null],
    ['max_tokens -1 rejected', { max_tokens: -1 }, ['max_tokens']],
    ['max_tokens null ok', { max_tokens: null }, null],
    ['n 1 ok', { n: 1 }, null],
    ['n 128 ok', { n: 128 }, null],
    ['n 129 rejected', { n: 129 }, ['n']],
    ['n 0 rejected', { n: 0 }, ['n']],
    ['seed max safe integer ok', { seed: Number.MAX_SAFE_INTEGER }, null],
    ['seed min safe integer ok', { seed: Number.MIN_SAFE_INTEGER }, null],
    ['seed null ok', { seed: null }, null],
    ['seed 0.5 rejected', { seed: 0.5 }, ['seed']],
    ['seed beyond safe integers rejected', { seed: 2 ** 63 }, ['seed']],
    ['stop 4 sequences ok', { stop: ['a', 'b', 'c', 'd'] }, null],
    ['stop 5 sequences rejected', { stop: ['a', 'b', 'c', 'd', 'e'] }, ['stop']],
    ['stop null ok', { stop: null }, null],
    ['stop array with a number rejected', { stop: ['a', 1] }, ['stop']],
    ['stream true ok', { stream: true }, null],
    ['stream null ok', { stream: null }, null],
    ['stream_options with stream true ok', { stream: true, stream_options: { include_usage: true } }, null],
    ['stream_options without stream rejected', { stream_options: { include_usage: true } }, ['stream_options']],
    ['stream_options not an object rejected', { stream: true, stream_options: 'yes' }, ['stream_options']],
    ['suffix string ok', { suffix: 'end' }, null],
    ['suffix null ok', { suffix: null }, null],
    ['suffix number rejected', { suffix: 1 }, ['suffix']],
    ['temperature 2 ok', { temperature: 2 }, null],
    ['temperature 2.01 rejected', { temperature: 2.01 }, ['temperature']],
    ['temperature null ok', { temperature: null }, null],
    ['top_p 0 ok', { top_p: 0 }, null],
    ['top_p 1.01 rejected', { top_p: 1.01 }, ['top_p']],
    ['user string ok', { user: 'u' }, null],
    ['user null rejected', { user: null }, ['user']],
    ['model missing rejected', { model: undefined }, ['model']],
    ['model number rejected', { model: 3 }, ['model']],
  ]);
});

describe('EmbeddingsBody', () => {
  runCases('embeddings', [
    ['input string ok', { input: 'hello' }, null],
    ['input string[] ok', { input: ['a', 'b'] }, null],
    ['input tokens ok', { input: [1, 2, 3] }, null],
    ['input token arrays ok', { input: [[1, 2], [3]] }, null],
    ['input empty string rejected', { input: '' }, ['input']],
    ['input empty array rejected', { input: [] }, ['input']],
    ['input empty string item rejected', { input: ['a', ''] }, ['input', 1]],
    ['input empty token array rejected', { input: [[1], []] }, ['input', 1]],
    ['input negative token rejected', { input: [1, -2] }, ['input', 1]],
    ['input missing rejected', { input: undefined }, ['input']],
    ['input null rejected', { input: null }, ['input']],
    ['encoding_format float ok', { encoding_format: 'float' }, null],
    ['encoding_format base64 ok', { encoding_format: 'base64' }, null],
    ['encoding_format hex rejected', { encoding_format: 'hex' }, ['encoding_format']],
    ['dimensions 1 ok', { dimensions: 1 }, null],
    ['dimensions 0 rejected', { dimensions: 0 }, ['dimensions']],
    ['dimensions 1.5 rejected', { dimensions: 1.5 }, ['dimensions']],
    ['user string ok', { user: 'u' }, null],
    ['user number rejected', { user: 1 }, ['user']],
    ['model missing rejected', { model: undefined }, ['model']],
  ]);
});

describe('unknown fields are passed through', () => {
  it.each<BodyEndpoint>(['chat', 'completions', 'embeddings'])('%s keeps unknown top-level fields unchanged', (endpoint) => {
    const body = with_(endpoint, { foo: { bar: 1 }, reasoning_effort: 'high', extra_list: [1, 'two', null] });
    const out = parseBody(endpoint, body) as Record<string, unknown>;
    expect(out.foo).toEqual({ bar: 1 });
    expect(out.reasoning_effort).toBe('high');
    expect(out.extra_list).toEqual([1, 'two', null]);
    expect(out).toEqual(body);
  });

  it('keeps unknown fields inside messages, content parts, tools and stream_options', () => {
    const body = {
      model: 'gpt-4o',
      messages: [
        {
          role: 'user',
          name: 'alice',
          content: [{ type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }],
          cache_control: { type: 'ephemeral' },
        },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } }, custom_flag: true }],
      response_format: { type: 'json_schema', json_schema: { name: 's', strict: true } },
      stream: true,
      stream_options: { include_usage: true, include_obfuscation: false },
    };
    const out = ChatCompletionBody.parse(body);
    expect(out).toEqual(body);
    expect(out.messages[0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(out.tools?.[0]?.custom_flag).toBe(true);
  });

  it('does not add absent optional fields', () => {
    const out = CompletionBody.parse({ model: 'm', prompt: 'p' });
    expect(Object.keys(out).sort()).toEqual(['model', 'prompt']);
  });
});

describe('parseBody errors', () => {
  it('throws a 400 invalid_request_body GatewayError with the dotted param and issue paths', () => {
    const err = rejectionOf('chat', {
      model: 'gpt-4o',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'robot', content: 'b' },
      ],
    });
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_request_body');
    expect(err.type).toBe('invalid_request_error');
    expect(err.param).toBe('messages[1].role');
    expect(err.issues?.[0]?.path).toEqual(['messages', 1, 'role']);
    expect(err.message).toContain('messages[1].role');
  });

  it('names logit_bias keys and nested prompt positions in param', () => {
    expect(rejectionOf('completions', with_('completions', { logit_bias: { '42': 101 } })).param).toBe('logit_bias.42');
    expect(rejectionOf('completions', with_('completions', { prompt: [[1], [2, -3]] })).param).toBe('prompt[1][1]');
    expect(rejectionOf('chat', with_('chat', { stream_options: {} })).param).toBe('stream_options');
    expect(rejectionOf('completions', with_('completions', { best_of: 2, n: 2 })).param).toBe('best_of');
  });

  it('reports every bad field, in order, in issues', () => {
    const err = rejectionOf('completions', { model: 'm', prompt: 'p', temperature: 3, top_p: 2, best_of: 2, n: 2 });
    expect(err.issues?.map((i) => i.path)).toEqual([['temperature'], ['top_p'], ['best_of']]);
    expect(err.message).toContain('(and 2 more)');
  });

  it('reports both best_of problems when best_of <= n and streamed', () => {
    const err = rejectionOf('completions', with_('completions', { best_of: 2, n: 2, stream: true }));
    const msgs = err.issues?.filter((i) => i.path.join('.') === 'best_of').map((i) => i.message) ?? [];
    expect(msgs).toHaveLength(2);
    expect(msgs.join(' ')).toMatch(/greater than n/);
    expect(msgs.join(' ')).toMatch(/stream/);
  });

  it.each<[string, unknown, string]>([
    ['an array', [{ model: 'm' }], 'an array'],
    ['a string', 'hello', 'a string'],
    ['null', null, 'null'],
    ['a number', 42, 'a number'],
    ['undefined', undefined, 'nothing'],
  ])('rejects a body that is %s with a clear 400', (_name, body, kind) => {
    for (const endpoint of ['chat', 'completions', 'embeddings'] as const) {
      const err = rejectionOf(endpoint, body);
      expect(err.status).toBe(400);
      expect(err.code).toBe('invalid_request_body');
      expect(err.param).toBeNull();
      expect(err.issues?.[0]?.path).toEqual([]);
      expect(err.message).toBe(`Invalid request body: expected a JSON object, got ${kind}`);
    }
  });

  it('returns the typed body on success', () => {
    const chat = parseBody('chat', { ...BASE.chat, temperature: 0.5 });
    expect(chat.temperature).toBe(0.5);
    expect(chat.messages[0]!.role).toBe('user');
    const emb = parseBody('embeddings', { ...BASE.embeddings, dimensions: 256 });
    expect(emb.dimensions).toBe(256);
    expect(EmbeddingsBody.safeParse({ model: 'm', input: 'x' }).success).toBe(true);
  });
});

describe('performance shape', () => {
  it('validates a large token prompt and reports only the first bad token', () => {
    const prompt = Array.from({ length: 100_000 }, (_, i) => i % 50_000);
    expect(CompletionBody.parse({ model: 'm', prompt }).prompt).toHaveLength(100_000);
    const bad = [...prompt];
    bad[70_000] = -1;
    bad[80_000] = -1;
    const r = CompletionBody.safeParse({ model: 'm', prompt: bad });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path)).toEqual([['prompt', 70_000]]);
  });
});
