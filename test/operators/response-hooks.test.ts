import { EMPTY, of, Subject, type MonoTypeOperatorFunction } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { responseHooks } from '../../src/operators/response-hooks.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import type { GatewayEvent } from '../../src/upstream/events.js';
import { answer, chatCtx, compile, runAll, stageDepsPerTest } from './hook-stages.helpers.js';

const { deps, webhook } = stageDepsPerTest();

const NO_SECRETS = { 'default.contains': { words: ['confidential'], operator: 'none' }, 'default.characterCount': { minCharacters: 1, maxCharacters: 200 } };
const meta = { provider: 'openai', target: 'config', retries: 0 };

/** A Subject piped through `op`: what came out, and how it ended (undefined when it completed, else the error). */
function driven(op: MonoTypeOperatorFunction<GatewayEvent>): { src: Subject<GatewayEvent>; seen: GatewayEvent[]; ended: Promise<unknown> } {
  const src = new Subject<GatewayEvent>();
  const seen: GatewayEvent[] = [];
  const ended = new Promise<unknown>((resolve) => src.pipe(op).subscribe({ next: (e) => seen.push(e), complete: () => resolve(undefined), error: resolve }));
  return { src, seen, ended };
}

/** A chat stream of `parts` as the pipeline carries it. */
function stream(parts: string[]): GatewayEvent[] {
  return [
    { type: 'stream-start', meta: { ...meta } },
    ...parts.map((p, i): GatewayEvent => ({ type: 'chunk', data: JSON.stringify({ id: 's', object: 'chat.completion.chunk', choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', content: p } : { content: p }, finish_reason: null }] }) })),
  ];
}

describe('responseHooks', () => {
  it('a passing JSON answer is sent as it came, its result on the account with the target', async () => {
    const { deps: d } = deps();
    const ctx = chatCtx('hi');
    const ev = answer('All good.');
    const out = await runAll(of<GatewayEvent>(ev), responseHooks({ hooks: compile('output_guardrails', [{ ...NO_SECRETS, deny: true }]), target: 'config.targets[0]', deps: d, outcome: ctx }));
    expect(out).toHaveLength(1);
    expect(out[0]).toBe(ev);
    expect(ctx.hooks!.after.map((h) => [h.verdict, h.target, h.checks.length])).toEqual([[true, 'config.targets[0]', 2]]);
    expect(ctx.hooks!.failed).toBe(false);
  });

  it('a denied JSON answer is a 446 that never quotes it', async () => {
    const { deps: d } = deps();
    const e = await runAll(of<GatewayEvent>(answer('This is confidential: the launch code is 0000.')), responseHooks({ hooks: compile('output_guardrails', [{ ...NO_SECRETS, deny: true }]), target: 'config', deps: d, outcome: chatCtx('hi') })).catch((x: unknown) => x);
    expect((e as GatewayError).status).toBe(446);
    expect(JSON.stringify((e as GatewayError).toBody('t'))).not.toContain('launch code');
  });

  it('a failing JSON answer without deny is sent and marked failed (246, not cached)', async () => {
    const { deps: d } = deps();
    const ctx = chatCtx('hi');
    const ev = answer('confidential');
    const out = await runAll(of<GatewayEvent>(ev), responseHooks({ hooks: compile('output_guardrails', [NO_SECRETS]), target: 'config', deps: d, outcome: ctx }));
    expect(out).toEqual([ev]);
    expect(ctx.hooks!.failed).toBe(true);
    expect((out[0] as { meta: { hooksFailed?: boolean } }).meta.hooksFailed).toBe(true);
  });

  it('a JSON answer whose checks wait on I/O (webhook) is sent once they pass, and the stage completes after them', async () => {
    const { deps: d } = deps();
    const hook = await webhook(true);
    const ctx = chatCtx('hi');
    const ev = answer('fine');
    expect(await runAll(of<GatewayEvent>(ev), responseHooks({ hooks: compile('output_guardrails', [{ 'default.webhook': { webhookURL: hook.url }, deny: true }]), target: 'config', deps: d, outcome: ctx }))).toEqual([ev]);
    expect(hook.hits()).toBe(1);
    expect(ctx.hooks!.after.map((h) => h.verdict)).toEqual([true]);
  });

  it('a source that ends without an answer ends the stage', async () => {
    const { deps: d } = deps();
    expect(await runAll(EMPTY, responseHooks({ hooks: compile('output_guardrails', [{ ...NO_SECRETS, deny: true }]), target: 'config', deps: d, outcome: chatCtx('hi') }))).toEqual([]);
  });

  it('an error answer passes untouched: hooks check answers, not failures', async () => {
    const { deps: d } = deps();
    const ctx = chatCtx('hi');
    const ev: GatewayEvent = { type: 'json', status: 500, body: { error: { message: 'confidential' } }, meta };
    expect(await runAll(of<GatewayEvent>(ev), responseHooks({ hooks: compile('output_guardrails', [{ ...NO_SECRETS, deny: true }]), target: 'config', deps: d, outcome: ctx }))).toEqual([ev]);
    expect(ctx.hooks).toBeUndefined();
  });

  it('a mutator replaces the answer body (and drops the provider text it no longer matches)', async () => {
    const { deps: d } = deps();
    const ctx = chatCtx('hi');
    const out = await runAll(of<GatewayEvent>(answer('call 555-0100 now')), responseHooks({ hooks: compile('output_guardrails', [{ 'default.regexReplace': { rule: '\\d{3}-\\d{4}', redactText: '[PHONE]' } }]), target: 'config', deps: d, outcome: ctx }));
    const ev = out[0] as Extract<GatewayEvent, { type: 'json' }>;
    expect((ev.body as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('call [PHONE] now');
    expect(ev.raw).toBeUndefined();
    expect(ctx.hooks!.after[0]!.transformed).toBe(true);
  });

  it('embeddings carry no text to check: the stage is the identity', async () => {
    const { deps: d } = deps();
    const ctx = chatCtx('hi', 'embeddings');
    const ev: GatewayEvent = { type: 'json', status: 200, body: { data: [] }, meta };
    expect(await runAll(of<GatewayEvent>(ev), responseHooks({ hooks: compile('output_guardrails', [{ ...NO_SECRETS, deny: true }]), target: 'config', deps: d, outcome: ctx }))).toEqual([ev]);
    expect(ctx.hooks).toBeUndefined();
  });

  describe('streams', () => {
    it('with a deny: nothing is emitted until the assembled answer passed, then the stream is replayed as it came', async () => {
      const { deps: d } = deps();
      const { src, seen, ended } = driven(responseHooks({ hooks: compile('output_guardrails', [{ ...NO_SECRETS, deny: true }]), target: 'config', deps: d, outcome: chatCtx('hi') }));
      const events = stream(['Hello', ' there']);
      for (const e of events) src.next(e);
      expect(seen).toEqual([]);
      src.complete();
      expect(await ended).toBeUndefined();
      expect(seen).toEqual(events);
    });

    it('with a deny: a bad answer is a 446 before any byte', async () => {
      const { deps: d } = deps();
      const { src, seen, ended } = driven(responseHooks({ hooks: compile('output_guardrails', [{ ...NO_SECRETS, deny: true }]), target: 'config', deps: d, outcome: chatCtx('hi') }));
      for (const e of stream(['This is ', 'confidential'])) src.next(e);
      src.complete();
      expect(((await ended) as GatewayError).status).toBe(446);
      expect(seen).toEqual([]);
    });

    it('without a deny: chunks flow as they come and the checks run on the assembled answer at its end', async () => {
      const { deps: d } = deps();
      const ctx = chatCtx('hi');
      const { src, seen, ended } = driven(responseHooks({ hooks: compile('output_guardrails', [NO_SECRETS]), target: 'config', deps: d, outcome: ctx }));
      const events = stream(['This is ', 'confidential']);
      src.next(events[0]!);
      src.next(events[1]!);
      expect(seen).toEqual(events.slice(0, 2));
      expect(ctx.hooks).toBeUndefined();
      src.next(events[2]!);
      src.complete();
      expect(await ended).toBeUndefined();
      expect(seen).toEqual(events);
      expect(ctx.hooks!.after[0]!.verdict).toBe(false);
      expect(ctx.hooks!.failed).toBe(true);
    });
  });
});
