/**
 * The Messages door's test rig (not a test file itself): the Anthropic fake, a gateway whose virtual
 * key `claude` reaches it, and the official Anthropic SDK pointed at the gateway.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { startGateway, type StartOptions, type TestGateway } from '../helpers/gateway.js';
import { FakeAnthropic } from '../fakes/anthropic-server.js';

export const ANTHROPIC_KEY = 'sk-ant-door-secret';

export interface Door {
  fake: FakeAnthropic;
  gw: TestGateway;
  /** The SDK with the gateway key in x-gateway-api-key and the virtual key `claude`, plus `headers` (null: not sent). */
  sdk(headers?: Record<string, string | null>, opts?: { apiKey?: string | null; authToken?: string }): Anthropic;
}

/** Registers the rig's hooks in the calling test file; its fields are set once `beforeAll` ran. */
export function useDoor(more: (fake: FakeAnthropic) => Partial<StartOptions> = () => ({}), bootstrapMore = (_fake: FakeAnthropic) => ''): Door {
  const door = {
    sdk(headers: Record<string, string | null> = {}, opts: { apiKey?: string | null; authToken?: string } = {}): Anthropic {
      return new Anthropic({
        apiKey: opts.apiKey === undefined ? 'unused' : opts.apiKey,
        authToken: opts.authToken,
        baseURL: door.gw.url,
        maxRetries: 0,
        timeout: 10_000,
        defaultHeaders: { 'x-gateway-api-key': door.gw.key, 'x-gateway-virtual-key': 'claude', ...headers },
      });
    },
  } as Door;
  beforeAll(async () => {
    door.fake = await FakeAnthropic.start(ANTHROPIC_KEY);
    door.gw = await startGateway({
      bootstrapYaml: `virtual_keys:\n  claude:\n    provider: anthropic\n    api_key: ${ANTHROPIC_KEY}\n    custom_host: ${door.fake.baseUrl}\n${bootstrapMore(door.fake)}`,
      ...more(door.fake),
    });
  });
  afterEach(() => door.fake.reset());
  afterAll(async () => {
    await door.gw?.close();
    await door.fake?.close();
  });
  return door;
}

/** The Anthropic SDK at `gw`, the gateway key as its auth token, the route as an inline config. */
export function configClient(gw: TestGateway, config: unknown, headers: Record<string, string> = {}): Anthropic {
  return new Anthropic({
    apiKey: null,
    authToken: gw.key,
    baseURL: gw.url,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-config': JSON.stringify(config), ...headers },
  });
}

/** Registers a provider fake (started, reset after each test, closed) and a plain gateway in the calling test file. */
export function useFakeGateway<F extends { reset(): void; close(): Promise<void> }>(start: () => Promise<F>): { fake: F; gw: TestGateway } {
  const rig = {} as { fake: F; gw: TestGateway };
  beforeAll(async () => {
    rig.fake = await start();
    rig.gw = await startGateway();
  });
  afterEach(() => rig.fake.reset());
  afterAll(async () => {
    await rig.gw?.close();
    await rig.fake?.close();
  });
  return rig;
}
