import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { FakeAzure } from '../fakes/azure-server.js';
import { configClient, useFakeGateway } from './_door.js';

/** The Messages door in front of Azure OpenAI (cloud A): a deployment's chat completions, its prompt-filter chunk and filter results left behind. */
const AZURE_KEY = '0123456789abcdef0123456789abcdef';
const rig = useFakeGateway(() => FakeAzure.start({ apiKey: AZURE_KEY, deployments: { 'gpt4o-prod': 'gpt-4o-2024-08-06' } }));
const target = () => ({ provider: 'azure-openai', api_key: AZURE_KEY, custom_host: `${rig.fake.origin}/openai`, deployment_id: 'gpt4o-prod', api_version: '2024-10-21' });
const client = (): Anthropic => configClient(rig.gw, target());
const weather = { name: 'weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } };

describe('messages through chat completions to Azure OpenAI', () => {
  it('messages.create: the deployment’s chat completions; a message with the deployment’s model', async () => {
    const msg = await client().messages.create({ model: 'gpt-4o', max_tokens: 32, messages: [{ role: 'user', content: 'ping' }] });
    expect(rig.fake.requests.at(-1)!.path).toBe('/openai/deployments/gpt4o-prod/chat/completions');
    expect(msg).toMatchObject({ type: 'message', model: 'gpt-4o-2024-08-06', content: [{ type: 'text', text: 'echo: ping' }], stop_reason: 'end_turn', usage: { input_tokens: 9, output_tokens: 3 } });
  });

  it('messages.stream with a tool: the prompt-filter chunk starts nothing; message_start names the model; the call streamed as a tool_use block', async () => {
    const stream = client().messages.stream({ model: 'gpt-4o', max_tokens: 32, tools: [weather], messages: [{ role: 'user', content: 'weather in Zürich?' }] });
    const starts: unknown[] = [];
    stream.on('streamEvent', (e) => {
      if (e.type === 'message_start') starts.push(e.message.model);
    });
    const final = await stream.finalMessage();
    expect(starts).toEqual(['gpt-4o-2024-08-06']);
    expect(final.content).toEqual([{ type: 'tool_use', id: 'call_az1', name: 'weather', input: { city: 'Zürich' } }]);
    expect(final).toMatchObject({ stop_reason: 'tool_use', usage: { input_tokens: 9, output_tokens: 3 } });
  });
});
