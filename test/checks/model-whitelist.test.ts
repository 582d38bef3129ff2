import { describe, expect, it } from 'vitest';
import { requestInput } from '../../src/checks/text.js';
import { chatRequest, expectInvalid, verdict } from './_helpers.js';

describe('modelWhitelist', () => {
  it('passes for a listed model, fails otherwise; not makes it a block list', async () => {
    expect(await verdict('modelWhitelist', { models: ['gpt-4o', 'x'] }, chatRequest('hi'))).toBe(true);
    expect(await verdict('modelWhitelist', { models: ['gpt-4o-mini'] }, chatRequest('hi'))).toBe(false);
    expect(await verdict('modelWhitelist', { models: ['gpt-4o'], not: true }, chatRequest('hi'))).toBe(false);
  });
  it('fails when the request names no model', async () => {
    expect(await verdict('modelWhitelist', { models: ['gpt-4o'] }, requestInput({ endpoint: 'chat', body: { messages: [] } }))).toBe(false);
  });
  it('refuses bad parameters', () => {
    expectInvalid('modelWhitelist', {}, 'models');
    expectInvalid('modelWhitelist', { models: [] }, 'models');
    expectInvalid('modelWhitelist', { models: [1] }, 'models.0');
  });
});
