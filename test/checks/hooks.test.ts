import { lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runHook, runInTurn, type HookRun, type HookSpec } from '../../src/checks/hooks.js';
import type { ResolvedCheck } from '../../src/checks/registry.js';
import type { CheckDef, CheckInput, CheckOutcome } from '../../src/checks/types.js';
import { isLater, later } from '../../src/util/now-or-later.js';
import { chatRequest, deps } from './_helpers.js';

/** A test check named `id`; `io` makes it one that waits (its answer is a promise). */
const check = (id: string, run: (input: CheckInput) => CheckOutcome | Promise<CheckOutcome>, o: { io?: boolean; mutator?: boolean } = {}): ResolvedCheck => ({
  id,
  def: { id, params: z.object({}), run, ...(o.io ? { io: true } : {}), ...(o.mutator ? { mutator: true } : {}) } as CheckDef<unknown>,
  params: {},
  not: false,
  path: id,
});

const hook = (id: string, checks: ResolvedCheck[], sequential = false): HookSpec => ({
  id,
  list: 'input_guardrails',
  path: id,
  type: 'guardrail',
  checks,
  denyOnFail: false,
  denyOnSuccess: false,
  async: false,
  failOnError: true,
  sequential,
  timeoutMs: 5_000,
});

/** An I/O check's answer, given by the test; `started` counts the runs begun. */
function held(id: string, verdict = true): { check: ResolvedCheck; started: () => number; answer: () => void } {
  let runs = 0;
  let answer: () => void = () => undefined;
  const c = check(
    id,
    () => {
      runs += 1;
      return new Promise<CheckOutcome>((resolve) => (answer = () => resolve({ verdict })));
    },
    { io: true },
  );
  return { check: c, started: () => runs, answer: () => answer() };
}

const lastText = (input: CheckInput): string => input.request.text;
/** A mutator that appends `suffix` to the last user message. */
const appends = (suffix: string): ResolvedCheck =>
  check(
    `append${suffix}`,
    (input) => ({ verdict: true, transformed: { request: { body: { model: 'm', messages: [{ role: 'user', content: input.request.text + suffix }] } } } }),
    { mutator: true },
  );

describe('runHook', () => {
  it('a hook whose checks only compute returns its run at once, results in place', () => {
    const run = runHook(hook('h', [check('a', () => ({ verdict: true })), check('b', () => ({ verdict: false, data: { n: 1 } }))]), chatRequest('x'), deps());
    expect(isLater(run)).toBe(false);
    const { result } = run as HookRun;
    expect(result.checks.map((c) => [c.id, c.verdict, c.data])).toEqual([
      ['a', true, null],
      ['b', false, { n: 1 }],
    ]);
    expect(result.verdict).toBe(false);
  });

  it('I/O checks run beside each other; the computation checks after them answer at once', async () => {
    const one = held('one');
    const two = held('two', false);
    const run = runHook(hook('h', [one.check, check('c', () => ({ verdict: true })), two.check]), chatRequest('x'), deps());
    expect(isLater(run)).toBe(true);
    const done = lastValueFrom(later(run));
    await Promise.resolve();
    expect([one.started(), two.started()]).toEqual([1, 1]);
    two.answer();
    one.answer();
    const { result } = await done;
    expect(result.checks.map((c) => [c.id, c.verdict])).toEqual([
      ['one', true],
      ['c', true],
      ['two', false],
    ]);
  });

  it('in order (sequential, or a mutator among them), an I/O check is awaited before the next starts, which sees the change before it', async () => {
    const io = held('io');
    const seen: string[] = [];
    const after = check('after', (input) => (seen.push(lastText(input)), { verdict: true }));
    const run = runHook(hook('h', [appends('!'), io.check, after]), chatRequest('x'), deps());
    const done = lastValueFrom(later(run));
    await Promise.resolve();
    expect([io.started(), seen]).toEqual([1, []]);
    io.answer();
    const r = await done;
    expect(seen).toEqual(['x!']);
    expect(r.result.transformed).toBe(true);
    expect(r.transformed?.request?.body).toMatchObject({ messages: [{ content: 'x!' }] });
  });
});

describe('runInTurn', () => {
  it('hooks that only compute: each run taken in order, the input the last one left returned at once', () => {
    const taken: string[] = [];
    const out = runInTurn([hook('a', [appends('1')]), hook('b', [appends('2')])], chatRequest('x'), deps(), (h, r) => taken.push(`${h.id}:${r.result.verdict}`));
    expect(isLater(out)).toBe(false);
    expect(taken).toEqual(['a:true', 'b:true']);
    expect(lastText(out as CheckInput)).toBe('x12');
  });

  it('a hook that waits turns the rest into an Observable: later hooks run after it, on the input it left', async () => {
    const io = held('io');
    const taken: string[] = [];
    const out = runInTurn([hook('a', [appends('1')]), hook('b', [io.check]), hook('c', [appends('3')])], chatRequest('x'), deps(), (h) => taken.push(h.id));
    expect(isLater(out)).toBe(true);
    const done = lastValueFrom(later(out));
    await Promise.resolve();
    expect(taken).toEqual(['a']);
    io.answer();
    expect(lastText(await done)).toBe('x13');
    expect(taken).toEqual(['a', 'b', 'c']);
  });

  it('a throwing `take` ends the turn: at once, or as the error of the Observable', async () => {
    const deny = (): void => {
      throw new Error('denied');
    };
    expect(() => runInTurn([hook('a', [appends('1')]), hook('b', [appends('2')])], chatRequest('x'), deps(), deny)).toThrow('denied');
    const io = held('io');
    const out = later(runInTurn([hook('a', [io.check])], chatRequest('x'), deps(), deny));
    const done = lastValueFrom(out);
    await Promise.resolve();
    io.answer();
    await expect(done).rejects.toThrow('denied');
  });
});
