import { describe, expect, it } from 'vitest';
import { truncateItems, unitStarts } from '../../src/providers/truncation.js';
import { fitContext } from '../../src/providers/context-fit.js';
import { ContextWindows } from '../../src/pricing/context-windows.js';
import { GatewayError } from '../../src/errors/gateway-error.js';

const msg = (role: string, text: string) => ({ type: 'message', role, content: text });
const call = (id: string) => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' });
const output = (id: string) => ({ type: 'function_call_output', call_id: id, output: 'ok' });

describe('truncateItems (truncation: "auto")', () => {
  it('keeps everything that fits, to the token', () => {
    const items = [msg('user', 'a'), msg('assistant', 'b'), msg('user', 'c')];
    expect(truncateItems(items, [10, 10, 10], 30)).toEqual({ items, tokens: 30 });
    expect(truncateItems(items, [10, 10, 10], 29)).toEqual({ items: items.slice(1), tokens: 20 });
  });

  it('keeps the first system or developer item and the latest items; the middle goes', () => {
    const items = [msg('developer', 'rules'), msg('user', '1'), msg('assistant', '2'), msg('user', '3'), msg('assistant', '4'), msg('user', '5')];
    const r = truncateItems(items, [5, 10, 10, 10, 10, 10], 35);
    expect(r).toEqual({ items: [items[0], items[3], items[4], items[5]], tokens: 35 });
  });

  it('an instruction item that is not first is still the one kept', () => {
    const items = [msg('user', 'old'), msg('system', 'rules'), msg('user', 'mid'), msg('user', 'new')];
    expect(truncateItems(items, [10, 5, 10, 10], 15)?.items).toEqual([items[1], items[3]]);
  });

  it('never parts a function call from its output: the pair goes or stays whole', () => {
    const items = [msg('user', 'q'), call('c1'), output('c1'), msg('assistant', 'a'), msg('user', 'q2')];
    // room for the two latest and one item more: the output alone would fit, but not without its call
    expect(truncateItems(items, [10, 10, 10, 10, 10], 30)?.items).toEqual([items[3], items[4]]);
    expect(truncateItems(items, [10, 10, 10, 10, 10], 40)?.items).toEqual(items.slice(1));
  });

  it('parallel calls answered in any order are one unit with everything between them', () => {
    const items = [msg('user', 'q'), call('a'), call('b'), output('b'), output('a'), msg('user', 'next')];
    expect(unitStarts(items)).toEqual([0, 1, 1, 1, 1, 5]);
    expect(truncateItems(items, [1, 1, 1, 1, 1, 1], 4)?.items).toEqual([items[5]]);
    expect(truncateItems(items, [1, 1, 1, 1, 1, 1], 5)?.items).toEqual(items.slice(1));
  });

  it('a call whose output comes later in the newest unit keeps it whole; an unanswered call is its own item', () => {
    const items = [msg('user', 'q'), call('x'), msg('user', 'q2'), output('x'), call('y')];
    expect(unitStarts(items)).toEqual([0, 1, 1, 1, 4]);
  });

  it('undefined when the first instruction item and the newest unit do not fit together', () => {
    const items = [msg('system', 'long rules'), msg('user', 'a'), msg('user', 'b')];
    expect(truncateItems(items, [20, 1, 15], 30)).toBeUndefined();
    expect(truncateItems([call('c'), output('c')], [10, 10], 15)).toBeUndefined();
    expect(truncateItems([], [], 10)).toBeUndefined();
  });
});

describe('fitContext', () => {
  const windows = new ContextWindows({ tiny: 30 });
  const input = [msg('system', 'abcd'), msg('user', 'a'.repeat(40)), msg('user', 'b'.repeat(40))]; // 5, 14, 14

  it('fits: undefined, the body untouched; a model without a window is not checked', () => {
    expect(fitContext({ model: 'tiny', input: input.slice(0, 2) }, windows)).toBeUndefined();
    expect(fitContext({ model: 'no-such-model', input: 'x'.repeat(1_000_000) }, windows)).toBeUndefined();
  });

  it('disabled: a 400 context_length_exceeded naming input; max_output_tokens is kept for the answer', () => {
    expect(fitContext({ model: 'tiny', input: input.slice(1), max_output_tokens: 2 }, windows)).toBeUndefined();
    const e = (() => {
      try {
        fitContext({ model: 'tiny', input: input.slice(1), max_output_tokens: 3 }, windows);
      } catch (err) {
        return err as GatewayError;
      }
    })();
    expect(e).toBeInstanceOf(GatewayError);
    expect(e).toMatchObject({ code: 'context_length_exceeded', param: 'input', status: 400 });
    expect(e!.message).toMatch(/about 28 tokens; model tiny has a context window of 30 tokens, of which max_output_tokens keeps 3/);
  });

  it('auto: the middle goes, said as items before and after; a string input cannot be truncated', () => {
    const r = fitContext({ model: 'tiny', input, truncation: 'auto', instructions: 'abcd' }, windows);
    expect(r).toEqual({ body: { model: 'tiny', input: [input[0], input[2]], truncation: 'auto', instructions: 'abcd' }, said: 'input=3->2' });
    expect(() => fitContext({ model: 'tiny', input: 'a'.repeat(200), truncation: 'auto' }, windows)).toThrow(/shorten it/);
  });
});
