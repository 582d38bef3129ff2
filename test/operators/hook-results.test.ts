import { of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { hookResultsBody, type HookAccount } from '../../src/checks/hooks.js';
import { hookResults } from '../../src/operators/hook-results.js';
import type { GatewayEvent } from '../../src/upstream/events.js';
import { answer, runAll } from './hook-stages.helpers.js';

const meta = { provider: 'openai', target: 'config', retries: 0 };

function account(failed = false): HookAccount {
  const check = (id: string, verdict: boolean) => ({ id, verdict, data: { count: 2 }, error: null, execution_time: 0.012, transformed: false });
  return {
    before: [{ id: 'input_guardrails[0]', verdict: true, deny: false, async: false, checks: [check('default.wordCount', true)], execution_time: 0.02, transformed: false }],
    after: [{ id: 'output_guardrails[0]', verdict: !failed, deny: false, async: false, checks: [check('default.contains', !failed)], execution_time: 0.03, transformed: false, target: 'config' }],
    failed,
  };
}

const json = (e: GatewayEvent) => e as Extract<GatewayEvent, { type: 'json' }>;

describe('hookResults', () => {
  it('without hooks, the answer passes untouched', async () => {
    const ev = answer('hi');
    expect(await runAll(of<GatewayEvent>(ev), hookResults({}, false))).toEqual([ev]);
  });

  it('splices hook_results into the provider text, keeping every byte of it, and sends the text only', async () => {
    const ev = answer('hi');
    const a = account();
    const [out] = await runAll(of<GatewayEvent>(ev), hookResults({ hooks: a }, false));
    const o = json(out!);
    expect(o.status).toBe(200);
    expect(o.body).toBeUndefined();
    expect(o.raw!.startsWith(ev.raw!.slice(0, -1))).toBe(true);
    expect(JSON.parse(o.raw!)).toEqual({ ...(ev.body as object), hook_results: JSON.parse(JSON.stringify(hookResultsBody(a))) });
  });

  it("the decorated answer has the members of the decoder's answer, in its order (one hidden class), its usage kept", async () => {
    // The decoder always sets usage, undefined when the provider sent none.
    for (const usage of [{ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 }, undefined]) {
      const decoded: GatewayEvent = { type: 'json', status: 200, body: JSON.parse(answer('hi').raw!) as unknown, raw: answer('hi').raw!, meta, usage };
      const [out] = await runAll(of<GatewayEvent>(decoded), hookResults({ hooks: account() }, false));
      expect(Object.keys(out!)).toEqual(Object.keys(decoded));
      expect(json(out!).usage).toBe(usage);
    }
  });

  it('a check failed without deny: 246', async () => {
    const [out] = await runAll(of<GatewayEvent>(answer('hi')), hookResults({ hooks: account(true) }, false));
    expect(json(out!).status).toBe(246);
  });

  it('an answer without provider text (a mutated one) gains hook_results in its body', async () => {
    const a = account();
    const [out] = await runAll(of<GatewayEvent>(answer('hi', false)), hookResults({ hooks: a }, false));
    expect((json(out!).body as { hook_results: unknown }).hook_results).toEqual(hookResultsBody(a));
  });

  it('a cache replay (text only) is parsed and decorated', async () => {
    const ev: GatewayEvent = { type: 'json', status: 200, body: undefined, raw: '{"id":"c1","choices":[]}', meta };
    const [out] = await runAll(of<GatewayEvent>(ev), hookResults({ hooks: account() }, false));
    expect(JSON.parse(json(out!).raw!)).toMatchObject({ id: 'c1', choices: [], hook_results: { before_request_hooks: [{ id: 'input_guardrails[0]' }] } });
  });

  it('an empty object answer gets hook_results as its only member', async () => {
    const ev: GatewayEvent = { type: 'json', status: 200, body: {}, raw: '{ }', meta };
    const [out] = await runAll(of<GatewayEvent>(ev), hookResults({ hooks: account() }, false));
    expect(Object.keys(JSON.parse(json(out!).raw!) as object)).toEqual(['hook_results']);
  });

  it('a stream ends with a hook_results comment', async () => {
    const a = account();
    const events: GatewayEvent[] = [{ type: 'stream-start', meta }, { type: 'chunk', data: '{"choices":[]}' }];
    const out = await runAll(of(...events), hookResults({ hooks: a }, false));
    expect(out.slice(0, 2)).toEqual(events);
    const last = out[2] as Extract<GatewayEvent, { type: 'chunk' }>;
    expect(last.comment).toBe(true);
    expect(JSON.parse(last.data.replace(/^hook_results /, ''))).toEqual(JSON.parse(JSON.stringify(hookResultsBody(a))));
  });

  it('strict_vendor_compliance sends only the provider answer', async () => {
    const ev = answer('hi');
    expect(await runAll(of<GatewayEvent>(ev), hookResults({ hooks: account(true) }, true))).toEqual([ev]);
  });
});
