import { describe, expect, it } from 'vitest';
import { canonicalCheckId, CHECKS, resolveCheck, runCheck } from '../../src/checks/registry.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { thrownBy } from '../helpers/throws.js';
import { chatRequest, deps } from './_helpers.js';

const IDS = [
  'regexMatch', 'regexReplace', 'contains', 'wordCount', 'sentenceCount', 'characterCount', 'jsonSchema', 'jsonKeys',
  'containsCode', 'validUrls', 'endsWith', 'alluppercase', 'alllowercase', 'notNull', 'modelWhitelist', 'modelRules',
  'allowedRequestTypes', 'requiredMetadataKeys', 'addPrefix', 'jwt', 'webhook', 'log', 'pii',
];

describe('check registry', () => {
  it('serves every built-in check as default.<name>', () => {
    expect([...CHECKS.keys()].sort()).toEqual(IDS.map((i) => `default.${i}`).sort());
    for (const [id, def] of CHECKS) expect(id).toBe(`default.${def.id}`);
  });

  it('a bare name means default.<name>; a namespaced id is kept', () => {
    expect(canonicalCheckId('regexMatch')).toBe('default.regexMatch');
    expect(canonicalCheckId('default.regexMatch')).toBe('default.regexMatch');
    expect(resolveCheck('regexMatch', { rule: 'a' }, 'p').id).toBe('default.regexMatch');
    expect(resolveCheck('default.regexMatch', { rule: 'a' }, 'p').id).toBe('default.regexMatch');
  });

  it('an unknown id is a 400 invalid_config naming the path (never a silent pass)', () => {
    for (const id of ['nope', 'default.nope', 'other.regexMatch']) {
      const e = thrownBy(GatewayError, () => resolveCheck(id, {}, 'input_guardrails.0'));
      expect(e.code).toBe('invalid_config');
      expect(e.param).toBe('input_guardrails.0');
      expect(e.message).toContain(`unknown check id "${id}"`);
      expect(e.issues?.[0]?.path).toEqual(['input_guardrails', '0']);
    }
  });

  it('a path given as segments keeps a segment that holds a dot', () => {
    const e = thrownBy(GatewayError, () => resolveCheck('regexMatch', {}, ['input_guardrails', 0, 'default.regexMatch']));
    expect(e.param).toBe('input_guardrails[0].default.regexMatch');
    expect(e.issues?.[0]?.path).toEqual(['input_guardrails', 0, 'default.regexMatch', 'rule']);
  });

  it('parameters must be an object; absent parameters are {}', () => {
    thrownBy(GatewayError, () => resolveCheck('notNull', [], 'p'));
    thrownBy(GatewayError, () => resolveCheck('notNull', 'x', 'p'));
    expect(resolveCheck('notNull', undefined, 'p').params).toEqual({});
  });

  it('every check with defaults resolves them, so runs see complete parameters', () => {
    expect(resolveCheck('wordCount', {}, 'p').params).toEqual({ minWords: 0, maxWords: 99999 });
    expect(resolveCheck('contains', { words: ['a'] }, 'p').params).toEqual({ words: ['a'], operator: 'any' });
  });

  it('not is taken only by checks that declare it, and inverts their verdict', async () => {
    const plain = resolveCheck('notNull', {}, 'p');
    const inverted = resolveCheck('notNull', { not: true }, 'p');
    expect(inverted.not).toBe(true);
    const s = new AbortController().signal;
    expect((await runCheck(plain, chatRequest('x'), deps(), s)).verdict).toBe(true);
    expect((await runCheck(inverted, chatRequest('x'), deps(), s)).verdict).toBe(false);
    for (const id of ['addPrefix', 'regexReplace', 'webhook', 'log', 'jwt', 'pii', 'requiredMetadataKeys', 'allowedRequestTypes']) {
      expect(CHECKS.get(`default.${id}`)!.supportsNot ?? false, id).toBe(false);
    }
  });

  it('phase: a request-only check is refused in the response phase', () => {
    expect(() => resolveCheck('jwt', { jwksUri: 'https://idp.example/jwks' }, 'p', 'request')).not.toThrow();
    const e = thrownBy(GatewayError, () => resolveCheck('jwt', { jwksUri: 'https://idp.example/jwks' }, 'after_request_hooks.0.checks.0', 'response'));
    expect(e.message).toMatch(/default\.jwt runs only on the request/);
  });
});
