import { afterAll, afterEach, beforeAll } from 'vitest';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/** A gateway and an OpenAI-shaped fake for the tests of a file: started before them, the fake reset after each, both closed at the end. */
export function gatewayAndFake(): { readonly fake: FakeOpenAI; readonly gw: TestGateway } {
  const env = {} as { fake: FakeOpenAI; gw: TestGateway };
  beforeAll(async () => {
    env.fake = await FakeOpenAI.start();
    env.gw = await startGateway();
  });
  afterEach(() => env.fake.reset());
  afterAll(async () => {
    await env.gw?.close();
    await env.fake?.close();
  });
  return env;
}
