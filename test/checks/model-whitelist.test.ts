import { describe, expect, it } from 'vitest';
import { requestInput } from '../../src/checks/text.js';
import { chatRequest, expectInvalid, verdict } from './_helpers.js';

describe('modelWhitelist', () => {
  it('passes for a listed model, fails otherwise; not makes it a block list', async () => {
    expect(await verdict('modelWhitelist', { models: ['gpt-4o', 'x'] }, chatRequest('hi'))).toBe(true);
    expect(await verdict('modelWhitelist', { models: ['gpt-4o-mini'] }, chatRequest('hi'))).toBe(false);
    expect(await verdict('modelWhitelist', { models: ['gpt-4o'], not: true }, chatRequest('hi'))).toBe(false);
  });
  it('compares normalised model ids: case and snapshot dates do not pass a block list', async () => {
    const asked = (model: string) => requestInput({ endpoint: 'chat', body: { model, messages: [] } });
    for (const model of ['GPT-4o-mini', 'gpt-4o-mini-2024-07-18', 'Gpt-4O-Mini-2024-07-18']) {
      expect(await verdict('modelWhitelist', { models: ['gpt-4o-mini'], not: true }, asked(model))).toBe(false);
      expect(await verdict('modelWhitelist', { models: ['gpt-4o-mini'] }, asked(model))).toBe(true);
    }
    expect(await verdict('modelWhitelist', { models: ['gpt-4o-mini'] }, asked('gpt-4o'))).toBe(false);
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
