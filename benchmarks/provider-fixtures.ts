/**
 * Realistic wire data per provider for the translation micro-benchmarks (benchmarks/micro.ts, the
 * `provider …` cases), written from each provider's API reference, not from the
 * translators: one chat request in the OpenAI shape, and per provider one non-stream answer and one
 * stream event as that provider sends them. Data only.
 */
import type { StreamEvent, Target } from '../src/providers/types.js';

/** A chat request as a client sends it: system prompt, a tool round trip, tools and parameters. */
export const PROVIDER_CHAT_REQUEST = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a helpful assistant. Answer briefly and cite the documentation you used.' },
    { role: 'user', content: 'What is the capital of France?' },
    { role: 'assistant', content: 'Paris.' },
    { role: 'user', content: [{ type: 'text', text: 'And what is its population?' }] },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_Ab3dE5fG7hI9', type: 'function', function: { name: 'lookup', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_Ab3dE5fG7hI9', content: '{"population":2102650}' },
  ],
  temperature: 0.7,
  top_p: 1,
  max_tokens: 256,
  stop: ['\n\nUser:'],
  tools: [
    {
      type: 'function',
      function: {
        name: 'lookup',
        description: 'Looks a city up in the encyclopedia',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    },
  ],
  tool_choice: 'auto',
};

/** The model each provider is asked for (Azure picks its deployment from the target instead). */
export const PROVIDER_MODELS: Readonly<Record<string, string>> = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-sonnet-4-5-20250929',
  'azure-openai': 'gpt-4o-mini',
  bedrock: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
  'vertex-ai': 'gemini-2.0-flash-001',
  mistral: 'mistral-small-latest',
};

const KEY = 'sk-micro-provider-0123456789abcdef';

/** The target of each contender: credentials and the fields its provider needs (no custom_host). */
export const PROVIDER_TARGETS: Readonly<Record<string, Target>> = {
  openai: { provider: 'openai', api_key: KEY },
  anthropic: { provider: 'anthropic', api_key: KEY },
  'azure-openai': { provider: 'azure-openai', api_key: KEY, extra: { resource_name: 'sluice-bench', deployment_id: 'gpt-4o-mini', api_version: '2024-10-21' } },
  bedrock: {
    provider: 'bedrock',
    extra: { cloud_b_access_key_id: 'AKIAIOSFODNN7EXAMPLE', cloud_b_secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', cloud_b_region: 'us-east-1' },
  },
  'vertex-ai': { provider: 'vertex-ai', api_key: 'ya29.a0AfB_byC-micro-access-token', extra: { cloud_c_region: 'us-central1', cloud_c_project_id: 'sluice-bench' } },
  mistral: { provider: 'mistral', api_key: KEY },
};

const TEXT = 'The population of Paris is about 2.1 million people (2,102,650 in the 2021 census).';

/** A non-stream answer per provider, as its bytes arrive (§1.4, §2.2, §3.3, §4.2, §5.2, §6). */
export const PROVIDER_ANSWERS: Readonly<Record<string, string>> = {
  openai: JSON.stringify({
    id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
    object: 'chat.completion',
    created: 1_741_569_952,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, message: { role: 'assistant', content: TEXT, refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: 98,
      completion_tokens: 24,
      total_tokens: 122,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_06737a9306',
  }),
  anthropic: JSON.stringify({
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content: [{ type: 'text', text: TEXT }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 112, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 27, service_tier: 'standard' },
  }),
  'azure-openai': JSON.stringify({
    id: 'chatcmpl-AzB9MBs8CjcvOU2jLn4n570S5qMJK',
    object: 'chat.completion',
    created: 1_741_569_952,
    model: 'gpt-4o-mini-2024-07-18',
    prompt_filter_results: [
      {
        prompt_index: 0,
        content_filter_results: {
          hate: { filtered: false, severity: 'safe' },
          jailbreak: { filtered: false, detected: false },
          self_harm: { filtered: false, severity: 'safe' },
          sexual: { filtered: false, severity: 'safe' },
          violence: { filtered: false, severity: 'safe' },
        },
      },
    ],
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: TEXT, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
        content_filter_results: {
          hate: { filtered: false, severity: 'safe' },
          protected_material_code: { filtered: false, detected: false },
          protected_material_text: { filtered: false, detected: false },
          self_harm: { filtered: false, severity: 'safe' },
          sexual: { filtered: false, severity: 'safe' },
          violence: { filtered: false, severity: 'safe' },
        },
      },
    ],
    usage: { prompt_tokens: 98, completion_tokens: 24, total_tokens: 122 },
    system_fingerprint: 'fp_b705f0c291',
  }),
  bedrock: JSON.stringify({
    output: { message: { role: 'assistant', content: [{ text: TEXT }] } },
    stopReason: 'end_turn',
    usage: { inputTokens: 112, outputTokens: 27, totalTokens: 139, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 },
    metrics: { latencyMs: 812 },
  }),
  'vertex-ai': JSON.stringify({
    candidates: [
      {
        content: { role: 'model', parts: [{ text: TEXT }] },
        finishReason: 'STOP',
        avgLogprobs: -0.0831,
        safetyRatings: [
          { category: 'HARM_CATEGORY_HATE_SPEECH', probability: 'NEGLIGIBLE', probabilityScore: 0.02, severity: 'HARM_SEVERITY_NEGLIGIBLE', severityScore: 0.03 },
          { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'NEGLIGIBLE', probabilityScore: 0.01, severity: 'HARM_SEVERITY_NEGLIGIBLE', severityScore: 0.02 },
        ],
      },
    ],
    usageMetadata: {
      promptTokenCount: 96,
      candidatesTokenCount: 25,
      totalTokenCount: 121,
      trafficType: 'ON_DEMAND',
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: 96 }],
      candidatesTokensDetails: [{ modality: 'TEXT', tokenCount: 25 }],
    },
    modelVersion: 'gemini-2.0-flash-001',
    createTime: '2025-03-10T01:25:52.000000Z',
    responseId: 'kEnOZ9DVBpvRnvgP2Pu-oQQ',
  }),
  mistral: JSON.stringify({
    id: 'cf79f7daaee244b1a0ae5c7b1444424a',
    object: 'chat.completion',
    created: 1_741_569_952,
    model: 'mistral-small-latest',
    choices: [{ index: 0, message: { role: 'assistant', content: TEXT, tool_calls: null, prefix: false }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 101, completion_tokens: 26, total_tokens: 127 },
  }),
};

const chunkOf = (id: string, model: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    id,
    object: 'chat.completion.chunk',
    created: 1_741_569_952,
    model,
    ...extra,
    choices: [{ index: 0, delta: { content: ' million' }, logprobs: null, finish_reason: null }],
  });

/**
 * What a stream needs before its text chunks (Anthropic's `message_start`, Vertex's first answer
 * with the role): fed once to the state the per-chunk case then reuses.
 */
export const PROVIDER_STREAM_PRELUDE: Readonly<Record<string, readonly StreamEvent[]>> = {
  anthropic: [
    {
      event: 'message_start',
      data: JSON.stringify({
        type: 'message_start',
        message: {
          id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5-20250929',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 112, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
        },
      }),
    },
    { event: 'content_block_start', data: '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}' },
  ],
  bedrock: [{ event: 'messageStart', data: '{"p":"abcdefghijklmnopq","role":"assistant"}' }],
  'vertex-ai': [
    {
      data: JSON.stringify({
        candidates: [{ content: { role: 'model', parts: [{ text: 'The' }] } }],
        usageMetadata: { trafficType: 'ON_DEMAND' },
        modelVersion: 'gemini-2.0-flash-001',
        createTime: '2025-03-10T01:25:52.000000Z',
        responseId: 'kEnOZ9DVBpvRnvgP2Pu-oQQ',
      }),
    },
  ],
};

/** One text chunk per provider, as its stream decoder hands it over (§1.5, §2.3, §3.3, §4.3, §5.3, §6). */
export const PROVIDER_STREAM_EVENTS: Readonly<Record<string, StreamEvent>> = {
  openai: { data: chunkOf('chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT', 'gpt-4o-mini-2024-07-18', { service_tier: 'default', system_fingerprint: 'fp_06737a9306' }) },
  anthropic: { event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" million"}}' },
  'azure-openai': {
    data: JSON.stringify({
      id: 'chatcmpl-AzB9MBs8CjcvOU2jLn4n570S5qMJK',
      object: 'chat.completion.chunk',
      created: 1_741_569_952,
      model: 'gpt-4o-mini-2024-07-18',
      system_fingerprint: 'fp_b705f0c291',
      choices: [
        {
          index: 0,
          delta: { content: ' million' },
          logprobs: null,
          finish_reason: null,
          content_filter_results: {
            hate: { filtered: false, severity: 'safe' },
            self_harm: { filtered: false, severity: 'safe' },
            sexual: { filtered: false, severity: 'safe' },
            violence: { filtered: false, severity: 'safe' },
          },
        },
      ],
    }),
  },
  // ConverseStream payloads carry a padding field `p` (§4.3).
  bedrock: { event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":" million"},"p":"abcdefghijklmnopqrstu"}' },
  'vertex-ai': {
    data: JSON.stringify({
      candidates: [{ content: { role: 'model', parts: [{ text: ' million' }] } }],
      usageMetadata: { trafficType: 'ON_DEMAND' },
      modelVersion: 'gemini-2.0-flash-001',
      createTime: '2025-03-10T01:25:52.000000Z',
      responseId: 'kEnOZ9DVBpvRnvgP2Pu-oQQ',
    }),
  },
  mistral: { data: chunkOf('cf79f7daaee244b1a0ae5c7b1444424a', 'mistral-small-latest') },
};

/** The contenders, in print order: the OpenAI pass-through first (the baseline). */
export const PROVIDER_IDS = ['openai', 'anthropic', 'azure-openai', 'bedrock', 'vertex-ai', 'mistral'] as const;
