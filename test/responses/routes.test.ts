import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { EXCHANGE_TIMEOUT_MS } from '../helpers/http.js';
import { jsonOrUndefined } from '../helpers/json.js';
import type { StoredResponse } from '../../src/state/response-store.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

const KEY_A = 'sk-test-responses-ws-a-0123456789';
const KEY_B = 'sk-test-responses-ws-b-0123456789';
const KEY_A_OTHER_ORG = 'sk-test-responses-ws-a-org2-0123456789';
const BOOTSTRAP = `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a, organisation_id: org-1 }
  - { key: ${KEY_B}, name: team-b, workspace_id: ws-b, organisation_id: org-1 }
  - { key: ${KEY_A_OTHER_ORG}, name: team-a2, workspace_id: ws-a, organisation_id: org-2 }
`;
const OWNER = { workspace_id: 'ws-a', organisation_id: 'org-1' };

const items = Array.from({ length: 5 }, (_, i) => ({ id: `msg_${i}`, type: 'message', role: 'user', content: [{ type: 'input_text', text: `turn ${i}` }] }));
const RECORD: StoredResponse = {
  response: {
    id: 'resp_stored1',
    object: 'response',
    created_at: 1_700_000_000,
    status: 'completed',
    model: 'gpt-4o-mini',
    output: [
      { id: 'fs_1', type: 'file_search_call', status: 'completed', queries: ['q'], results: [{ file_id: 'f1', text: 'found' }] },
      { id: 'msg_out', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hello', annotations: [] }] },
    ],
  },
  input_items: [
    ...items,
    { id: 'msg_img', type: 'message', role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' }] },
  ],
  owner: OWNER,
};

async function call(gw: TestGateway, method: string, path: string, key = KEY_A) {
  const res = await request(`${gw.url}${path}`, { method: method as 'GET', headers: { 'x-gateway-api-key': key }, headersTimeout: EXCHANGE_TIMEOUT_MS, bodyTimeout: EXCHANGE_TIMEOUT_MS });
  const text = await res.body.text();
  return { status: res.statusCode, json: jsonOrUndefined(text), headers: res.headers };
}

describe('stored responses: GET / DELETE /v1/responses/:id, input_items', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ bootstrapYaml: BOOTSTRAP });
    await gw.gateway.stores.responses.put(RECORD);
    await gw.gateway.stores.responses.put({ ...RECORD, response: { ...RECORD.response, id: 'resp_todelete' } });
  });
  afterAll(() => gw.close());

  it('GET answers the stored response (file search results only when included)', async () => {
    const r = await call(gw, 'GET', '/v1/responses/resp_stored1');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: 'resp_stored1', object: 'response', status: 'completed' });
    expect(r.json.output[0]).not.toHaveProperty('results');
    const inc = await call(gw, 'GET', '/v1/responses/resp_stored1?include=file_search_call.results');
    expect(inc.json.output[0].results).toEqual([{ file_id: 'f1', text: 'found' }]);
  });

  it('include accepts the three values, repeated or comma separated, in both spellings', async () => {
    for (const q of [
      'include=file_search_call.results&include=message.input_image.image_url',
      'include=file_search_call.results,computer_call_output.output.image_url',
      'include%5B%5D=message.input_image.image_url&include%5B%5D=file_search_call.results',
    ]) {
      expect((await call(gw, 'GET', `/v1/responses/resp_stored1?${q}`)).status).toBe(200);
    }
  });

  it('any other include value is a 400 naming it; an unknown parameter is a 400 naming it', async () => {
    const bad = await call(gw, 'GET', '/v1/responses/resp_stored1?include=file_search_call.results,reasoning.encrypted_content');
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: 'invalid_query_parameter', param: 'include' });
    expect(bad.json.error.message).toContain('reasoning.encrypted_content');
    const unknown = await call(gw, 'GET', '/v1/responses/resp_stored1?colour=blue');
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toContain('colour');
  });

  it('an unknown id, another workspace and the same workspace id in another organisation are all 404 with the envelope', async () => {
    for (const [id, key] of [
      ['resp_unknown', KEY_A],
      ['resp_stored1', KEY_B],
      ['resp_stored1', KEY_A_OTHER_ORG],
    ] as const) {
      const r = await call(gw, 'GET', `/v1/responses/${id}`, key);
      expect(r.status).toBe(404);
      expect(r.json.error).toMatchObject({ code: 'response_not_found', type: 'invalid_request_error', param: 'response_id' });
    }
    expect((await call(gw, 'DELETE', '/v1/responses/resp_stored1', KEY_B)).status).toBe(404);
    expect((await call(gw, 'GET', '/v1/responses/resp_stored1/input_items', KEY_B)).status).toBe(404);
  });

  it('input_items: newest first by default, a cursor page (limit, after, order), image URLs only when included', async () => {
    const first = await call(gw, 'GET', '/v1/responses/resp_stored1/input_items?limit=2');
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ object: 'list', first_id: 'msg_img', last_id: 'msg_4', has_more: true });
    expect(first.json.data[0].content[0]).not.toHaveProperty('image_url');
    const next = await call(gw, 'GET', '/v1/responses/resp_stored1/input_items?limit=2&after=msg_4');
    expect(next.json.data.map((i: { id: string }) => i.id)).toEqual(['msg_3', 'msg_2']);
    const asc = await call(gw, 'GET', '/v1/responses/resp_stored1/input_items?order=asc&limit=100&include=message.input_image.image_url');
    expect(asc.json.data.map((i: { id: string }) => i.id)).toEqual(['msg_0', 'msg_1', 'msg_2', 'msg_3', 'msg_4', 'msg_img']);
    expect(asc.json.has_more).toBe(false);
    expect(asc.json.data[5].content[0].image_url).toBe('https://example.com/a.png');
    const bad = await call(gw, 'GET', '/v1/responses/resp_stored1/input_items?limit=101');
    expect(bad.json.error).toMatchObject({ code: 'invalid_query_parameter', param: 'limit' });
  });

  it('the openai SDK retrieves, lists input items (every page) and deletes', async () => {
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const got = await client.responses.retrieve('resp_stored1', { include: ['file_search_call.results'] });
    expect(got.id).toBe('resp_stored1');
    expect(got.output_text).toBe('hello');
    const ids: string[] = [];
    for await (const item of client.responses.inputItems.list('resp_stored1', { limit: 4 })) ids.push((item as { id: string }).id);
    expect(ids).toEqual(['msg_img', 'msg_4', 'msg_3', 'msg_2', 'msg_1', 'msg_0']);
    await client.responses.delete('resp_todelete');
    await expect(client.responses.retrieve('resp_todelete')).rejects.toMatchObject({ status: 404 });
  });

  it('DELETE answers the deletion, then the id is gone; another method is a 405', async () => {
    await gw.gateway.stores.responses.put({ ...RECORD, response: { ...RECORD.response, id: 'resp_del2' } });
    const del = await call(gw, 'DELETE', '/v1/responses/resp_del2');
    expect(del.json).toEqual({ id: 'resp_del2', object: 'response', deleted: true });
    expect((await call(gw, 'GET', '/v1/responses/resp_del2')).status).toBe(404);
    const put = await call(gw, 'PUT', '/v1/responses/resp_stored1');
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('GET, DELETE');
  });
});

describe('stored responses with --redis: a second instance serves GET', () => {
  let server: RedisServer;
  let gw1: TestGateway;
  let gw2: TestGateway;
  beforeAll(async () => {
    server = await startRedisServer();
    gw1 = await startGateway({ options: { redis: server.url, 'response-ttl': '60' }, bootstrapYaml: BOOTSTRAP });
    gw2 = await startGateway({ options: { redis: server.url }, bootstrapYaml: BOOTSTRAP });
  });
  afterAll(async () => {
    await gw1?.close();
    await gw2?.close();
    await server?.close();
  });

  it('a response stored through the first is read (and deleted) through the second, scoped the same way', async () => {
    expect(gw1.gateway.stores.responses.kind).toBe('redis');
    await gw1.gateway.stores.responses.put(RECORD);
    expect((await call(gw2, 'GET', '/v1/responses/resp_stored1')).json).toMatchObject({ id: 'resp_stored1', status: 'completed' });
    expect((await call(gw2, 'GET', '/v1/responses/resp_stored1', KEY_B)).status).toBe(404);
    expect((await call(gw2, 'DELETE', '/v1/responses/resp_stored1')).status).toBe(200);
    expect((await call(gw1, 'GET', '/v1/responses/resp_stored1')).status).toBe(404);
  });
});
