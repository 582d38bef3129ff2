/**
 * What the pipeline unit tests share (not a test file itself): plans built from configs that reach
 * FakeOpenAI servers on 127.0.0.1, pipeline deps with a manual clock and a recording Telemetry, one
 * real undici Agent, and a way to run an Observable to its end.
 */
import type { Observable } from 'rxjs';
import { Agent } from 'undici';
import { parseConfig } from '../../src/config/schema.js';
import { buildPlan } from '../../src/plan/build-plan.js';
import type { PlanNode } from '../../src/plan/types.js';
import { newContext, type PipelineDeps, type RequestContext } from '../../src/pipeline/context.js';
import type { GatewayEvent } from '../../src/upstream/events.js';
import { defaultProviders, ProviderRegistry } from '../../src/providers/registry.js';
import type { ProviderRequest } from '../../src/providers/types.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { MemoryBreakerStore } from '../../src/state/memory/breaker-store.js';
import { CHAT } from '../routing/helpers.js';
import { FakeClock } from '../helpers/clock.js';
import { recording, type Call } from '../helpers/telemetry.js';
import { MemoryVersionedStore } from '../../src/state/memory/versioned-store.js';
import type { VirtualKey } from '../../src/config/bootstrap.js';

export { CHAT, PROVIDER_KEY, target } from '../routing/helpers.js';
export const CHAT_PATH = '/v1/chat/completions';

const registry = new ProviderRegistry(defaultProviders());
const planDeps = { virtualKeys: new MemoryVersionedStore<VirtualKey>(), registry, hostGuard: new HostGuard({ trusted: ['127.0.0.1'] }) };

/** A validated config → its plan, as the resolver builds it. */
export const plan = (config: unknown): PlanNode => buildPlan(parseConfig(config), planDeps);

export interface Harness {
  deps: PipelineDeps;
  clock: FakeClock;
  /** Every Telemetry call, in order. */
  calls: Call[];
  /** Closes the undici Agent. */
  close(): Promise<void>;
}

/** Pipeline deps over a real undici Agent (for both trusted and custom hosts), no cache unless given. */
export function harness(over: Partial<PipelineDeps> = {}): Harness {
  const clock = new FakeClock();
  const { telemetry, calls } = recording(clock.now);
  const agent = new Agent({ keepAliveTimeout: 1000 });
  const deps: PipelineDeps = {
    registry,
    dispatcher: agent,
    telemetry,
    breakers: new MemoryBreakerStore(),
    streamIdleTimeoutMs: 5000,
    requestBudgetMs: 60_000,
    now: clock.now,
    random: () => 0,
    ...over,
  };
  return { deps, clock, calls, close: () => agent.close() };
}

/** One request's context: a non-stream chat by default, started now on `clock`. */
export function context(
  clock: FakeClock,
  o: { request?: Partial<ProviderRequest>; metadata?: Record<string, unknown>; pathname?: string; startedAt?: number } = {},
): RequestContext {
  const request: ProviderRequest = { endpoint: 'chat', body: CHAT, stream: false, headers: {}, ...o.request };
  const ctx = newContext('trace-pipeline', request, clock.now(), o.pathname ?? CHAT_PATH, o.metadata);
  if (o.startedAt !== undefined) ctx.startedAt = o.startedAt;
  return ctx;
}

export interface Outcome {
  events: GatewayEvent[];
  error?: any;
}

/** Subscribe and wait for completion or error. */
export function collect(obs: Observable<GatewayEvent>): Promise<Outcome> {
  return new Promise((resolve) => {
    const events: GatewayEvent[] = [];
    obs.subscribe({
      next: (e) => events.push(e),
      error: (error: unknown) => resolve({ events, error }),
      complete: () => resolve({ events }),
    });
  });
}

/** The one JSON answer of a non-stream outcome (fails the test on an error). */
export function answer(o: Outcome): Extract<GatewayEvent, { type: 'json' }> {
  if (o.error) throw o.error;
  const json = o.events.find((e) => e.type === 'json');
  if (!json || json.type !== 'json') throw new Error(`no json event in ${JSON.stringify(o.events)}`);
  return json;
}
