import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { checksValidator, guardrailLookup, GuardrailsService, noChecksKnown } from '../../src/management/guardrails.js';
import { MemoryGuardrailStore } from '../../src/state/memory/guardrail-store.js';
import { thrownBy } from '../helpers/throws.js';

function throwsGatewayError(fn: () => unknown, code: string, param: string): void {
  const e = thrownBy(GatewayError, fn);
  expect(e.code).toBe(code);
  expect(e.param).toBe(param);
}

const checks = [{ id: 'default.wordCount', parameters: { minWords: 1 } }];

describe('guardrailLookup (the plan builder\'s view of the store)', () => {
  it('gives the checks, denyOnFail from actions.onFail and the message; latest or pinned version; undefined when unknown', async () => {
    const store = new MemoryGuardrailStore();
    const lookup = guardrailLookup(store);
    const v1 = await store.create({ name: 'Words', checks, actions: { onFail: 'block', message: 'too short' }, workspace_id: 'w' });
    expect(lookup('words')).toEqual({ checks, denyOnFail: true, message: 'too short' });
    const v2 = await store.update(v1.id, {}, { name: 'Words', checks: [{ id: 'pii', parameters: {} }], actions: { onFail: 'log' } });
    expect(lookup(v1.id)).toEqual({ checks: v2!.checks, denyOnFail: false });
    expect(lookup('words', v1.version_id)).toEqual({ checks, denyOnFail: true, message: 'too short' });
    await store.update(v1.id, {}, { name: 'Words', checks, actions: {} });
    expect(lookup('words')).toEqual({ checks });
    expect(lookup('nope')).toBeUndefined();
    expect(lookup('words', 'no-such-version')).toBeUndefined();
  });
});

describe('checksValidator (from the check library\'s resolveCheck)', () => {
  it('hands each check its id, parameters and path checks.<i>.parameters; the library\'s error goes through', () => {
    const seen: unknown[] = [];
    const validate = checksValidator((id, parameters, path) => {
      seen.push([id, parameters, path]);
      if (id === 'bad') throw new GatewayError('invalid_config', 'unknown', { param: path.join('.') });
    });
    validate([{ id: 'a', parameters: { x: 1 } }, { id: 'b', parameters: {} }], 'checks');
    expect(seen).toEqual([
      ['a', { x: 1 }, ['checks', 0, 'parameters']],
      ['b', {}, ['checks', 1, 'parameters']],
    ]);
    throwsGatewayError(() => validate([{ id: 'a', parameters: {} }, { id: 'bad', parameters: {} }], 'checks'), 'invalid_config', 'checks.1.parameters');
  });

  it('without a check library nothing passes (fail closed)', () => {
    throwsGatewayError(() => noChecksKnown([{ id: 'default.contains', parameters: {} }], 'checks'), 'invalid_config', 'checks[0].id');
  });
});

describe('GuardrailsService', () => {
  it('a store that cannot write gives 503 store_unavailable, not 500', async () => {
    const store = new MemoryGuardrailStore();
    store.create = () => Promise.reject(new Error('Connection is closed.'));
    const svc = new GuardrailsService(store, () => {});
    await expect(svc.create({ name: 'x', checks, actions: {} }, { name: 'k', workspace_id: 'w' })).rejects.toMatchObject({ code: 'store_unavailable', status: 503 });
  });
});
