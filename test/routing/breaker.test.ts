/**
 * Circuit breaker end to end, with a manual clock handed to the gateway: opening, refusing with
 * Retry-After, being skipped by fallback and loadbalance, the half-open probe and its verdicts.
 */
import http from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chatCompletion, FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { chat, CHAT, FakeClock, gate, target } from './helpers.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const CHAT_PATH = '/v1/chat/completions';
const CB = { failure_threshold: 2, cooldown_interval: 30_000 };

let a: FakeOpenAI;
let b: FakeOpenAI;
let gw: TestGateway;
let clock: FakeClock;
let rnd: () => number;

beforeAll(async () => {
  [a, b] = await Promise.all([FakeOpenAI.start(), FakeOpenAI.start()]);
});

// A fresh gateway (and so fresh breaker state) per test.
beforeEach(async () => {
  clock = new FakeClock();
  rnd = Math.random;
  gw = await startGateway({ now: clock.now, random: () => rnd() });
});

afterEach(async () => {
  await gw.close();
  a.reset();
  b.reset();
});

afterAll(async () => {
  await a?.close();
  await b?.close();
});

const single = () => target(a, { cb_config: CB });

/** Two 500s through a single target with cb_config: the circuit opens. */
async function openA(): Promise<void> {
  a.setDefault(CHAT_PATH, openAIError(500, 'boom'));
  expect((await chat(gw, single())).status).toBe(500);
  expect((await chat(gw, single())).status).toBe(500);
  expect(a.requests).toHaveLength(2);
}

describe('opening the circuit', () => {
  it('two 500s open it: the next request gets 503 circuit_open with Retry-After and the fake receives nothing', async () => {
    await openA();
    const r = await chat(gw, single());
    expect(r.status).toBe(503);
    expect(r.json.error.code).toBe('circuit_open');
    expect(r.headers['retry-after']).toBe('30');
    expect(a.requests).toHaveLength(2);
  });

  it('Retry-After is the cooldown time left', async () => {
    await openA();
    clock.advance(10_000);
    const r = await chat(gw, single());
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('20');
    expect(a.requests).toHaveLength(2);
  });

  it('one failure is below the threshold: the next request still reaches the target', async () => {
    a.enqueue(CHAT_PATH, openAIError(500, 'boom'));
    expect((await chat(gw, single())).status).toBe(500);
    const r = await chat(gw, single());
    expect(r.status).toBe(200);
    expect(a.requests).toHaveLength(2);
  });

  it('4xx answers are not failures by default: two 400s leave the circuit closed', async () => {
    a.setDefault(CHAT_PATH, openAIError(400, 'bad'));
    expect((await chat(gw, single())).status).toBe(400);
    expect((await chat(gw, single())).status).toBe(400);
    const r = await chat(gw, single());
    expect(r.status).toBe(400);
    expect(a.requests).toHaveLength(3);
  });

  it('failure_status_codes narrows what counts: with [429], two 500s leave it closed and two 429s open it', async () => {
    const cfg = target(a, { cb_config: { ...CB, failure_status_codes: [429] } });
    a.enqueue(CHAT_PATH, openAIError(500, 'x'), openAIError(500, 'x'), openAIError(429, 'y'), openAIError(429, 'y'));
    for (let i = 0; i < 4; i++) await chat(gw, cfg);
    expect(a.requests).toHaveLength(4);
    const r = await chat(gw, cfg);
    expect(r.status).toBe(503);
    expect(r.json.error.code).toBe('circuit_open');
    expect(a.requests).toHaveLength(4);
  });
});

describe('strategies skip an open target', () => {
  it('in a fallback the open target is skipped and the second answers', async () => {
    a.setDefault(CHAT_PATH, openAIError(500, 'boom'));
    const cfg = { strategy: { mode: 'fallback' }, targets: [target(a, { cb_config: CB }), target(b)] };
    for (let i = 0; i < 2; i++) {
      const r = await chat(gw, cfg);
      expect(r.status).toBe(200);
      expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    }
    expect(a.requests).toHaveLength(2);
    const r = await chat(gw, cfg);
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    expect(a.requests).toHaveLength(2);
    expect(b.requests).toHaveLength(3);
  });

  it('in a loadbalance the open target is not chosen', async () => {
    rnd = () => 0; // always the first eligible target
    a.setDefault(CHAT_PATH, openAIError(500, 'boom'));
    const cfg = { strategy: { mode: 'loadbalance' }, targets: [target(a, { cb_config: CB }), target(b)] };
    expect((await chat(gw, cfg)).status).toBe(500);
    expect((await chat(gw, cfg)).status).toBe(500);
    for (let i = 0; i < 3; i++) {
      const r = await chat(gw, cfg);
      expect(r.status).toBe(200);
      expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    }
    expect(a.requests).toHaveLength(2);
    expect(b.requests).toHaveLength(3);
  });

  it('a loadbalance whose every target is open answers 503 circuit_open with the shortest time left', async () => {
    rnd = () => 0;
    a.setDefault(CHAT_PATH, openAIError(500, 'a boom'));
    b.setDefault(CHAT_PATH, openAIError(500, 'b boom'));
    const cfg = { strategy: { mode: 'loadbalance' }, cb_config: CB, targets: [target(a), target(b)] };
    await chat(gw, cfg);
    await chat(gw, cfg); // a opens at t0
    clock.advance(5_000);
    await chat(gw, cfg);
    await chat(gw, cfg); // b opens at t0 + 5 s
    expect([a.requests.length, b.requests.length]).toEqual([2, 2]);
    const r = await chat(gw, cfg);
    expect(r.status).toBe(503);
    expect(r.json.error.code).toBe('circuit_open');
    expect(r.headers['retry-after']).toBe('25');
    expect([a.requests.length, b.requests.length]).toEqual([2, 2]);
  });
});

describe('weight-0 targets and open circuits', () => {
  it('a weight-0 sibling without a breaker does not make Retry-After 0 when the only weighted target is open', async () => {
    a.setDefault(CHAT_PATH, openAIError(500, 'boom'));
    const cfg = { strategy: { mode: 'loadbalance' }, targets: [target(a, { cb_config: CB }), target(b, { weight: 0 })] };
    await chat(gw, cfg);
    await chat(gw, cfg);
    const r = await chat(gw, cfg);
    expect(r.status).toBe(503);
    expect(r.json.error.code).toBe('circuit_open');
    expect(r.headers['retry-after']).toBe('30');
    expect(b.requests).toHaveLength(0);
  });

  it('a nested loadbalance that can only serve through an open target is not picked by its parent', async () => {
    rnd = () => 0; // the first eligible child at every level
    a.setDefault(CHAT_PATH, openAIError(500, 'boom'));
    const cfg = {
      strategy: { mode: 'loadbalance' },
      targets: [
        { strategy: { mode: 'loadbalance' }, targets: [target(a, { cb_config: CB }), target(b, { weight: 0 })] },
        target(b),
      ],
    };
    expect((await chat(gw, cfg)).status).toBe(500);
    expect((await chat(gw, cfg)).status).toBe(500);
    const r = await chat(gw, cfg);
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    expect(a.requests).toHaveLength(2);
  });
});

describe('after the cooldown', () => {
  it('one probe goes through (a second request meanwhile is refused); its success closes the circuit', async () => {
    await openA();
    clock.advance(30_001);
    const held = gate();
    a.setDefault(CHAT_PATH, async () => {
      await held.promise;
      return { json: chatCompletion('probe ok') };
    });
    const probe = chat(gw, single());
    await a.waitForRequests(3);
    const meanwhile = await chat(gw, single());
    expect(meanwhile.status).toBe(503);
    expect(meanwhile.json.error.code).toBe('circuit_open');
    expect(a.requests).toHaveLength(3);
    held.open();
    const p = await probe;
    expect(p.status).toBe(200);
    expect(p.json.choices[0].message.content).toBe('probe ok');
    // Closed: following requests reach the target again.
    for (let i = 0; i < 2; i++) expect((await chat(gw, single())).status).toBe(200);
    expect(a.requests).toHaveLength(5);
  });

  it('a failed probe re-opens the circuit for a whole cooldown', async () => {
    await openA();
    clock.advance(30_001);
    const p = await chat(gw, single());
    expect(p.status).toBe(500);
    expect(a.requests).toHaveLength(3);
    const r = await chat(gw, single());
    expect(r.status).toBe(503);
    expect(r.json.error.code).toBe('circuit_open');
    expect(r.headers['retry-after']).toBe('30');
    expect(a.requests).toHaveLength(3);
    // After another cooldown a successful probe closes it.
    a.reset();
    clock.advance(30_001);
    expect((await chat(gw, single())).status).toBe(200);
    expect((await chat(gw, single())).status).toBe(200);
    expect(a.requests).toHaveLength(2);
  });

  it('before the cooldown has passed no probe is let through', async () => {
    await openA();
    clock.advance(29_000);
    const r = await chat(gw, single());
    expect(r.status).toBe(503);
    expect(a.requests).toHaveLength(2);
  });

  it('in a fallback, the probe goes to the recovered first target again', async () => {
    a.setDefault(CHAT_PATH, openAIError(500, 'boom'));
    const cfg = { strategy: { mode: 'fallback' }, targets: [target(a, { cb_config: CB }), target(b)] };
    await chat(gw, cfg);
    await chat(gw, cfg);
    expect((await chat(gw, cfg)).headers['x-gateway-target']).toBe('config.targets[1]');
    a.reset();
    clock.advance(30_001);
    const r = await chat(gw, cfg);
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[0]');
    expect(a.requests).toHaveLength(1);
  });

  it('a probe the client abandons releases the slot: the next request probes', async () => {
    await openA();
    clock.advance(30_001);
    a.reset();
    a.enqueue(CHAT_PATH, { hang: true });
    const req = http.request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gw.headers({ 'x-gateway-config': JSON.stringify(single()) }),
    });
    req.on('error', () => {});
    req.end(JSON.stringify(CHAT));
    const [rec] = await a.waitForRequests(1);
    req.destroy();
    await rec!.closed;
    expect(rec!.aborted).toBe(true);
    const r = await chat(gw, single());
    expect(r.status).toBe(200);
    expect(a.requests).toHaveLength(2);
  });
});
