import { describe, expect, it } from 'vitest';
import { requestInput } from '../../src/checks/text.js';
import { expectInvalid, run, verdict } from './_helpers.js';

const rules = {
  defaults: ['gpt-4o-mini'],
  metadata: { plan: { pro: ['gpt-4o', 'o1'], free: ['gpt-4o-mini'] }, team: { ml: ['o3'] } },
};
const req = (model: string, metadata: Record<string, unknown> = {}) =>
  requestInput({ endpoint: 'chat', body: { model, messages: [] }, metadata });

describe('modelRules', () => {
  it('metadata rules decide when one matches; their models are united', async () => {
    expect(await verdict('modelRules', { rules }, req('o1', { plan: 'pro' }))).toBe(true);
    expect(await verdict('modelRules', { rules }, req('gpt-4o-mini', { plan: 'pro' }))).toBe(false);
    expect(await verdict('modelRules', { rules }, req('o3', { plan: 'pro', team: 'ml' }))).toBe(true);
    expect(await verdict('modelRules', { rules }, req('o3', { team: ['x', 'ml'] }))).toBe(true);
  });

  it('defaults apply when no metadata rule matches', async () => {
    expect(await run('modelRules', { rules }, req('gpt-4o-mini', { plan: 'enterprise' }))).toEqual({
      verdict: true,
      data: { model: 'gpt-4o-mini', matchedRules: [], usingDefaults: true },
    });
    expect(await verdict('modelRules', { rules }, req('gpt-4o'))).toBe(false);
  });

  it('a metadata value named like an Object prototype key is not a rule', async () => {
    expect(await verdict('modelRules', { rules }, req('gpt-4o-mini', { plan: 'constructor' }))).toBe(true);
  });

  it('compares normalised model ids (case, snapshot dates)', async () => {
    expect(await verdict('modelRules', { rules }, req('O1-2024-12-17', { plan: 'pro' }))).toBe(true);
    expect(await verdict('modelRules', { rules, not: true }, req('GPT-4o-mini-2024-07-18'))).toBe(false);
  });

  it('not inverts', async () => {
    expect(await verdict('modelRules', { rules, not: true }, req('gpt-4o'))).toBe(true);
  });

  it('refuses rules without defaults or metadata, and badly shaped rules', () => {
    expectInvalid('modelRules', {}, 'rules');
    expectInvalid('modelRules', { rules: {} }, 'rules', /defaults or metadata/);
    expectInvalid('modelRules', { rules: { metadata: { plan: { pro: 'gpt-4o' } } } }, 'rules.metadata.plan.pro');
    expectInvalid('modelRules', { rules: { defaults: ['a'], other: 1 } }, 'rules');
  });
});
