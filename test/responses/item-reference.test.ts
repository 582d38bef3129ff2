import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { FakeOpenAI } from '../fakes/openai-server.js';

/**
 * `item_reference` input items, with the official openai SDK: resolved against the stored input and
 * output items of the same (organisation, workspace), on a provider reached through chat; an id
 * that is unknown, or another tenant's, is a 400 naming the item.
 */
const KEY_A = 'sk-test-itemref-ws-a-0123456789';
const KEY_B = 'sk-test-itemref-ws-b-0123456789';
const BOOTSTRAP = `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a, organisation_id: org-1 }
  - { key: ${KEY_B}, name: team-b, workspace_id: ws-b, organisation_id: org-1 }
`;

let fake: FakeOpenAI;
let gw: TestGateway;

function sdk(key = KEY_A): OpenAI {
  return new OpenAI({
    apiKey: 'sk-compat',
    baseURL: `${gw.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': key, 'x-gateway-provider': 'openai-compatible', 'x-gateway-custom-host': fake.baseUrl },
  });
}

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway({ bootstrapYaml: BOOTSTRAP });
});
afterEach(() => fake.reset());
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe('item_reference input items', () => {
  it("an input item and an output item of a stored response are sent as that item's content", async () => {
    const first = await sdk().responses.create({ model: 'gpt-4o-mini', input: [{ id: 'msg_question', type: 'message', role: 'user', content: 'What is 6 x 7?' }] as never });
    const answer = first.output.find((i) => i.type === 'message')!;
    const second = await sdk().responses.create({
      model: 'gpt-4o-mini',
      input: [{ type: 'item_reference', id: 'msg_question' }, { type: 'item_reference', id: answer.id }, { role: 'user', content: 'Sure?' }],
      store: false,
    });
    expect(second.status).toBe('completed');
    const [, up] = await fake.waitForRequests(2);
    expect(up!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is 6 x 7?' }] },
      { role: 'assistant', content: first.output_text },
      { role: 'user', content: 'Sure?' },
    ]);
  });

  it('the stored input items of a request with references are the items they named', async () => {
    const first = await sdk().responses.create({ model: 'gpt-4o-mini', input: 'remember me' });
    const [item] = (await sdk().responses.inputItems.list(first.id)).data;
    const second = await sdk().responses.create({ model: 'gpt-4o-mini', input: [{ type: 'item_reference', id: item!.id }] });
    const items = (await sdk().responses.inputItems.list(second.id)).data;
    expect(items).toEqual([expect.objectContaining({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'remember me' }] })]);
  });

  it("an unknown id, and another workspace's item, are a 400 naming the item; nothing is sent", async () => {
    const first = await sdk().responses.create({ model: 'gpt-4o-mini', input: 'mine' });
    const [item] = (await sdk().responses.inputItems.list(first.id)).data;
    for (const [key, id] of [[KEY_A, 'msg_nowhere'], [KEY_B, item!.id]] as const) {
      const e = await sdk(key).responses.create({ model: 'gpt-4o-mini', input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id }] }).catch((x: unknown) => x);
      expect(e).toMatchObject({ status: 400, code: 'invalid_request_body', param: 'input[1].id' });
      expect((e as Error).message).toContain(id);
    }
    expect(fake.requests).toHaveLength(1);
  });
});
