import { of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { hookResultsBody, type HookAccount } from '../../src/checks/hooks.js';
import { hookResults } from '../../src/operators/hook-results.js';
import { OPENAI_FRAMING } from '../../src/ingress/openai.js';
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
    expect(await runAll(of<GatewayEvent>(ev), hookResults({ outcome: {} }))).toEqual([ev]);
  });

  it('adds hook_results to the answer body as a plain object, for the response writer to serialise (the provider text is dropped)', async () => {
    const ev = answer('hi');
    const a = account();
    const [out] = await runAll(of<GatewayEvent>(ev), hookResults({ outcome: { hooks: a } }));
    const o = json(out!);
    expect(o.status).toBe(200);
    expect(o.raw).toBeUndefined();
    expect(o.body).toEqual({ ...(ev.body as object), hook_results: hookResultsBody(a) });
    expect(JSON.parse(OPENAI_FRAMING.json(o))).toEqual({ ...(ev.body as object), hook_results: JSON.parse(JSON.stringify(hookResultsBody(a))) });
  });

  it("keeps the answer's meta and usage", async () => {
    for (const usage of [{ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 }, undefined]) {
      const decoded: GatewayEvent = { type: 'json', status: 200, body: JSON.parse(answer('hi').raw!) as unknown, raw: answer('hi').raw!, meta, usage };
      const [out] = await runAll(of<GatewayEvent>(decoded), hookResults({ outcome: { hooks: account() } }));
      expect(json(out!).meta).toBe(meta);
      expect(json(out!).usage).toBe(usage);
    }
  });

  it('a check failed without deny: 246', async () => {
    const [out] = await runAll(of<GatewayEvent>(answer('hi')), hookResults({ outcome: { hooks: account(true) } }));
    expect(json(out!).status).toBe(246);
  });

  it('an answer without provider text (a mutated one) gains hook_results in its body', async () => {
    const a = account();
    const [out] = await runAll(of<GatewayEvent>(answer('hi', false)), hookResults({ outcome: { hooks: a } }));
    expect((json(out!).body as { hook_results: unknown }).hook_results).toEqual(hookResultsBody(a));
  });

  it('a cache replay (text only) is parsed and decorated', async () => {
    const ev: GatewayEvent = { type: 'json', status: 200, body: undefined, raw: '{"id":"c1","choices":[]}', meta };
    const [out] = await runAll(of<GatewayEvent>(ev), hookResults({ outcome: { hooks: account() } }));
    expect(json(out!).body).toMatchObject({ id: 'c1', choices: [], hook_results: { before_request_hooks: [{ id: 'input_guardrails[0]' }] } });
  });

  it('an empty object answer gets hook_results as its only member', async () => {
    const ev: GatewayEvent = { type: 'json', status: 200, body: {}, raw: '{ }', meta };
    const [out] = await runAll(of<GatewayEvent>(ev), hookResults({ outcome: { hooks: account() } }));
    expect(Object.keys(JSON.parse(OPENAI_FRAMING.json(json(out!))) as object)).toEqual(['hook_results']);
  });

  it('a stream ends with a hook_results comment', async () => {
    const a = account();
    const events: GatewayEvent[] = [{ type: 'stream-start', meta }, { type: 'chunk', data: '{"choices":[]}' }];
    const out = await runAll(of(...events), hookResults({ outcome: { hooks: a } }));
    expect(out.slice(0, 2)).toEqual(events);
    const last = out[2] as Extract<GatewayEvent, { type: 'chunk' }>;
    expect(last.comment).toBe(true);
    expect(JSON.parse(last.data.replace(/^hook_results /, ''))).toEqual(JSON.parse(JSON.stringify(hookResultsBody(a))));
  });

  it('strict_vendor_compliance sends only the provider answer', async () => {
    const ev = answer('hi');
    expect(await runAll(of<GatewayEvent>(ev), hookResults({ outcome: { hooks: account(true) }, strict: true }))).toEqual([ev]);
  });
});
