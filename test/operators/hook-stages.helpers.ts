/** Shared set-up of the hook stage operator tests (not a test file itself). */
import { afterEach } from 'vitest';
import { firstValueFrom, lastValueFrom, of, toArray, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import { createCheckDeps } from '../../src/checks/deps.js';
import type { HookList, HookResult } from '../../src/checks/hooks.js';
import type { HookedRequest, HookStageDeps } from '../../src/operators/request-hooks.js';
import { compileHooks } from '../../src/plan/hooks.js';
import { HostGuard } from '../../src/security/host-guard.js';
import type { GatewayEvent } from '../../src/upstream/events.js';
import { recording } from '../helpers/telemetry.js';
import { json, localServer } from '../checks/_helpers.js';
import { gate } from '../routing/helpers.js';

export const compile = (list: HookList, items: unknown[]) => compileHooks(list, items, 'config');

/** One report of async hooks' results (HookStageDeps.onAsync). */
interface AsyncReport {
  traceId: string;
  results: HookResult[];
  phase: string;
}

/**
 * Stage deps with a recording telemetry, checks that may reach 127.0.0.1, and the async results
 * kept; `nextAsync()` resolves at the next report.
 */
function stageDeps(): { deps: HookStageDeps; calls: ReturnType<typeof recording>['calls']; asyncResults: AsyncReport[]; nextAsync: () => Promise<AsyncReport>; close: () => Promise<void> } {
  const { telemetry, calls } = recording();
  const checks = createCheckDeps(new HostGuard({ trusted: ['127.0.0.1'] }));
  const asyncResults: AsyncReport[] = [];
  let waiters: ((r: AsyncReport) => void)[] = [];
  return {
    deps: {
      checks,
      telemetry,
      onAsync: (traceId, results, phase) => {
        const r = { traceId, results, phase };
        asyncResults.push(r);
        const w = waiters;
        waiters = [];
        for (const f of w) f(r);
      },
    },
    calls,
    asyncResults,
    nextAsync: () => new Promise((r) => waiters.push(r)),
    close: () => checks.close(),
  };
}

export function chatCtx(text: string, endpoint = 'chat'): HookedRequest {
  return { traceId: 'trace-1', request: { endpoint, body: { model: 'gpt-4o', messages: [{ role: 'user', content: text }] }, headers: {}, stream: false } };
}

export function answer(text: string, raw = true): Extract<GatewayEvent, { type: 'json' }> {
  const body = { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] };
  return { type: 'json', status: 200, body, ...(raw ? { raw: JSON.stringify(body) } : {}), meta: { provider: 'openai', target: 'config', retries: 0 } };
}

export const run1 = <T>(value: T, op: MonoTypeOperatorFunction<T>): Promise<T> => firstValueFrom(of(value).pipe(op));
export const runAll = <T>(source: Observable<T>, op: MonoTypeOperatorFunction<T>): Promise<T[]> => lastValueFrom(source.pipe(op, toArray()));

/** A webhook receiver on 127.0.0.1:0 answering `verdict`, after `hold` resolves when one is given. */
async function webhookServer(verdict: boolean, hold?: Promise<void>): Promise<{ url: string; hits: () => number; waitForHit: () => Promise<void>; close: () => Promise<void> }> {
  const hit = gate();
  const server = await localServer((_req, res) => {
    hit.open();
    void (hold ?? Promise.resolve()).then(() => json(res, 200, { verdict }));
  });
  return { url: `${server.url}/hook`, hits: () => server.received.length, waitForHit: () => hit.promise, close: server.close };
}

/** `stageDeps` for one test file: each test's deps and webhook receivers are closed after it. */
export function stageDepsPerTest(): { deps: () => ReturnType<typeof stageDeps>; webhook: typeof webhookServer } {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (closers.length) await closers.pop()!();
  });
  return {
    deps: () => {
      const d = stageDeps();
      closers.push(d.close);
      return d;
    },
    webhook: async (verdict, hold) => {
      const w = await webhookServer(verdict, hold);
      closers.push(w.close);
      return w;
    },
  };
}
