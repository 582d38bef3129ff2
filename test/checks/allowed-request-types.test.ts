import { describe, expect, it } from 'vitest';
import { resolveCheck } from '../../src/checks/registry.js';
import { requestInput } from '../../src/checks/text.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { thrownBy } from '../helpers/throws.js';
import { expectInvalid, verdict } from './_helpers.js';

const req = (endpoint: 'chat' | 'completions' | 'embeddings') => requestInput({ endpoint, body: { model: 'm' } });

describe('allowedRequestTypes', () => {
  it('allow list: only the listed endpoints pass (both name styles)', async () => {
    expect(await verdict('allowedRequestTypes', { allowedTypes: ['chat'] }, req('chat'))).toBe(true);
    expect(await verdict('allowedRequestTypes', { allowedTypes: ['chatComplete'] }, req('chat'))).toBe(true);
    expect(await verdict('allowedRequestTypes', { allowedTypes: ['chat', 'embed'] }, req('completions'))).toBe(false);
  });

  it('block list: listed endpoints fail, others pass; both lists combine', async () => {
    expect(await verdict('allowedRequestTypes', { blockedTypes: ['embeddings'] }, req('embeddings'))).toBe(false);
    expect(await verdict('allowedRequestTypes', { blockedTypes: ['embeddings'] }, req('chat'))).toBe(true);
    const both = { allowedTypes: ['chat', 'complete'], blockedTypes: ['embed'] };
    expect(await verdict('allowedRequestTypes', both, req('completions'))).toBe(true);
    expect(await verdict('allowedRequestTypes', both, req('embeddings'))).toBe(false);
  });

  it('refuses no lists, unknown names and conflicts; runs only on requests', () => {
    expectInvalid('allowedRequestTypes', {}, '', /allowedTypes or blockedTypes/);
    expectInvalid('allowedRequestTypes', { allowedTypes: ['imageGenerate'] }, 'allowedTypes.0');
    expectInvalid('allowedRequestTypes', { allowedTypes: ['chat'], blockedTypes: ['chatComplete'] }, 'blockedTypes', /both allowed and blocked/);
    const e = thrownBy(GatewayError, () => resolveCheck('allowedRequestTypes', { allowedTypes: ['chat'] }, 'after.0', 'response'));
    expect(e.message).toMatch(/runs only on the request/);
  });
});
