import { describe, expect, it } from 'vitest';
import { of, type Observable } from 'rxjs';
import { deniedError, denialMessage, requestHooks, type HookedRequest } from '../../src/operators/request-hooks.js';
import { hookResultsBody, type HookAccount, type HookResult } from '../../src/checks/hooks.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { gate } from '../routing/helpers.js';
import { chatCtx, compile, run1, stageDepsPerTest } from './hook-stages.helpers.js';

const { deps, webhook } = stageDepsPerTest();

const SSN = { 'default.regexMatch': { rule: '\\d{3}-\\d{2}-\\d{4}', not: true }, 'default.wordCount': { minWords: 1, maxWords: 5 } };

describe('requestHooks', () => {
  it('a passing guardrail lets the request through with its result on the account and a metric per check', async () => {
    const { deps: d, calls } = deps();
    const ctx = await run1(chatCtx('hello there'), requestHooks({ hooks: compile('input_guardrails', [{ ...SSN, deny: true }]), deps: d }));
    expect(ctx.hooks?.failed).toBe(false);
    expect(ctx.hooks?.before).toHaveLength(1);
    expect(ctx.hooks!.before[0]).toMatchObject({ id: 'input_guardrails[0]', verdict: true, deny: false, transformed: false });
    expect(ctx.hooks!.before[0]!.checks.map((c) => [c.id, c.verdict, c.error])).toEqual([
      ['default.regexMatch', true, null],
      ['default.wordCount', true, null],
    ]);
    expect(calls.filter((c) => c[0] === 'check').map((c) => [c[1], c[2]])).toEqual([
      ['default.regexMatch', 'pass'],
      ['default.wordCount', 'pass'],
    ]);
  });

  it('a failing guardrail with deny is a 446 carrying hook_results, and nothing is emitted', async () => {
    const { deps: d, calls } = deps();
    const e = await run1(chatCtx('my ssn is 123-45-6789'), requestHooks({ hooks: compile('input_guardrails', [{ ...SSN, deny: true }]), deps: d })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GatewayError);
    const ge = e as GatewayError;
    expect([ge.status, ge.code]).toEqual([446, 'hooks_failed']);
    const results = ge.extra?.hook_results as { before_request_hooks: { verdict: boolean }[] };
    expect(results.before_request_hooks.map((h) => h.verdict)).toEqual([false]);
    expect(calls.some((c) => c[0] === 'hookDenied')).toBe(true);
  });

  it('a failing guardrail without deny marks the request (246) and lets it through', async () => {
    const { deps: d } = deps();
    const ctx = await run1(chatCtx('one two three four five six seven'), requestHooks({ hooks: compile('input_guardrails', [SSN]), deps: d }));
    expect(ctx.hooks?.failed).toBe(true);
    expect(ctx.hooks!.before[0]!.checks.find((c) => c.id === 'default.wordCount')?.verdict).toBe(false);
  });

  it('a mutator changes the body, and a later hook checks the changed text', async () => {
    const { deps: d } = deps();
    const before = chatCtx('hello');
    const original = before.request.body;
    const hooks = compile('input_guardrails', [{ 'default.addPrefix': { prefix: 'SAFE: ' } }, { 'default.contains': { words: ['SAFE'], operator: 'any' }, deny: true }]);
    const ctx = await run1(before, requestHooks({ hooks, deps: d }));
    expect((ctx.request.body as { messages: { content: string }[] }).messages[0]!.content).toBe('SAFE: hello');
    expect(ctx.hooks!.before.map((h) => [h.verdict, h.transformed])).toEqual([
      [true, true],
      [true, false],
    ]);
    // the client's body object itself is not changed (copy on write)
    expect((original as { messages: { content: string }[] }).messages[0]!.content).toBe('hello');
  });

  it('a request without a body (models) passes untouched', async () => {
    const { deps: d } = deps();
    const ctx = chatCtx('x', 'models');
    ctx.request.body = undefined;
    const out = await run1(ctx, requestHooks({ hooks: compile('input_guardrails', [{ ...SSN, deny: true }]), deps: d }));
    expect(out).toBe(ctx);
    expect(out.hooks).toBeUndefined();
  });

  it('a hook that waits on I/O (webhook) is awaited before the request goes on, and its verdict counts', async () => {
    const { deps: d } = deps();
    const hook = await webhook(false);
    const e = await run1(chatCtx('hello'), requestHooks({ hooks: compile('input_guardrails', [{ 'default.webhook': { webhookURL: hook.url }, deny: true }]), deps: d })).catch((x: unknown) => x);
    expect((e as GatewayError).status).toBe(446);
    expect(hook.hits()).toBe(1);
  });

  it("keeps another stage's change made while its checks waited (a race's contenders share the context)", async () => {
    const { deps: d } = deps();
    const held = gate();
    const hook = await webhook(true, held.promise);
    const ctx = chatCtx('hello');
    const done = run1(ctx, requestHooks({ hooks: compile('input_guardrails', [{ 'default.webhook': { webhookURL: hook.url }, deny: true }]), deps: d }));
    await hook.waitForHit();
    const changed = { ...ctx.request, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'SAFE: hello' }] } };
    ctx.request = changed; // what another contender's mutator did meanwhile
    held.open();
    const out = await done;
    expect(out.hooks?.before.map((h) => h.verdict)).toEqual([true]);
    expect(out.request).toBe(changed);
  });

  it('an async hook runs beside the request: the request goes on before its webhook answers, and its result is reported later', async () => {
    const { deps: d, asyncResults, nextAsync, calls } = deps();
    const held = gate();
    const hook = await webhook(false, held.promise);
    const hooks = compile('before_request_hooks', [{ id: 'audit', type: 'guardrail', async: true, checks: [{ id: 'default.webhook', parameters: { webhookURL: hook.url } }], on_fail: { deny: true } }]);
    const ctx = await run1(chatCtx('hello'), requestHooks({ hooks, deps: d }));
    // through, unmarked: the async hook's failure never changes the request
    expect(ctx.hooks).toBeUndefined();
    expect(asyncResults).toEqual([]);
    const reported = nextAsync();
    held.open();
    await reported;
    expect(asyncResults[0]).toMatchObject({ traceId: 'trace-1', phase: 'request' });
    expect(asyncResults[0]!.results.map((r) => [r.id, r.verdict, r.deny])).toEqual([['audit', false, false]]);
    // measured as reported: failed, but no denial counted (an async hook never denies)
    expect(calls.filter((c) => c[0] === 'check').map((c) => c[2])).toEqual(['fail']);
    expect(calls.some((c) => c[0] === 'hookDenied')).toBe(false);
  });
});

/** What `obs` emitted or threw during its subscription (before the subscription call returned). */
function during<T>(obs: Observable<T>): { values: T[]; error?: unknown; completed: boolean } {
  const seen: { values: T[]; error?: unknown; completed: boolean } = { values: [], completed: false };
  obs.subscribe({ next: (v) => seen.values.push(v), error: (e: unknown) => (seen.error = e), complete: () => (seen.completed = true) });
  return seen;
}

describe('requestHooks: hooks that only compute run during the subscription', () => {
  it('a pass is on the account, a mutation replaces the body, a deny is the 446, all before subscribe returns', () => {
    const { deps: d } = deps();
    const stage = requestHooks<HookedRequest>({ hooks: compile('input_guardrails', [{ 'default.addPrefix': { prefix: 'SAFE: ' } }, { ...SSN, deny: true }]), deps: d });
    const ok = chatCtx('hello');
    expect(during(of(ok).pipe(stage))).toEqual({ values: [ok], completed: true });
    expect(ok.hooks?.before.map((h) => [h.verdict, h.transformed])).toEqual([
      [true, true],
      [true, false],
    ]);
    expect((ok.request.body as { messages: { content: string }[] }).messages[0]!.content).toBe('SAFE: hello');
    const bad = chatCtx('ssn 123-45-6789');
    const denied = during(of(bad).pipe(stage));
    expect(denied.values).toEqual([]);
    expect(denied.error).toBeInstanceOf(GatewayError);
    expect([(denied.error as GatewayError).status, (denied.error as GatewayError).code]).toEqual([446, 'hooks_failed']);
    expect(bad.hooks?.before.at(-1)?.deny).toBe(true);
  });

  it('passes the models endpoint and a request without a body untouched', () => {
    const { deps: d } = deps();
    const stage = requestHooks<HookedRequest>({ hooks: compile('input_guardrails', [{ 'default.notNull': {}, deny: true }]), deps: d });
    const models = chatCtx('x', 'models');
    const bodiless = chatCtx('x');
    bodiless.request.body = undefined;
    expect(during(of(models, bodiless).pipe(stage))).toEqual({ values: [models, bodiless], completed: true });
    expect([models.hooks, bodiless.hooks]).toEqual([undefined, undefined]);
  });
});

describe('deniedError', () => {
  it("an answer's 446 leaves out a webhook's data, on a copy (the account's own result is not changed)", () => {
    const passed: HookResult = {
      id: 'output_guardrails[0]',
      verdict: true,
      deny: false,
      async: false,
      checks: [{ id: 'default.webhook', verdict: true, data: { quoted: 'the secret answer' }, error: null, execution_time: 1, transformed: false }],
      execution_time: 1,
      transformed: false,
      target: 'config',
    };
    const denier: HookResult = { ...passed, id: 'length', verdict: false, deny: true, checks: [{ ...passed.checks[0]!, id: 'default.wordCount', verdict: false, data: null }] };
    const account: HookAccount = { before: [], after: [passed, denier], failed: false };
    const results = deniedError(account, 'answer', denier, 'output_guardrails').extra?.hook_results as { after_request_hooks: HookResult[] };
    const scrubbed = results.after_request_hooks[0]!;
    expect(scrubbed.checks[0]!.data).toBeNull();
    expect(JSON.stringify(hookResultsBody({ before: [], after: [scrubbed], failed: false }))).not.toContain('the secret answer');
    expect(passed.checks[0]!.data).toEqual({ quoted: 'the secret answer' });
  });
});

describe('denialMessage (who refused, never what was checked)', () => {
  const check = (id: string, verdict: boolean, error: string | null = null) => ({ id, verdict, data: { text: 'checked words' }, error, execution_time: 1, transformed: false });
  const result = (verdict: boolean, checks: ReturnType<typeof check>[]): HookResult => ({ id: 'no-cards', verdict, deny: true, async: false, checks, execution_time: 1, transformed: false });

  it('names the hook, its list and the checks that failed (each id once), not those that passed', () => {
    const r = result(false, [check('default.regexMatch', false), check('default.contains', true), check('default.regexMatch', false)]);
    expect(denialMessage(r, 'input_guardrails', 'request')).toBe('Hook "no-cards" (input_guardrails) denied the request: checks failed: default.regexMatch.');
  });

  it('tells a check that could not run from one that failed, without its error text', () => {
    const r = result(false, [check('default.webhook', false, 'connect ECONNREFUSED 10.0.0.1:443'), check('default.wordCount', false)]);
    const msg = denialMessage(r, 'output_guardrails', 'answer');
    expect(msg).toBe('Hook "no-cards" (output_guardrails) denied the answer: checks failed: default.wordCount; could not run (error or time limit): default.webhook.');
    expect(msg).not.toContain('ECONNREFUSED');
  });

  it('a hook that denies on success says so, with its checks', () => {
    const r = result(true, [check('default.contains', true)]);
    expect(denialMessage(r, 'before_request_hooks', 'request')).toBe('Hook "no-cards" (before_request_hooks) denied the request: it passed, and it denies on success (checks: default.contains).');
  });
});
