import { describe, expect, it } from 'vitest';
import { chatRequest, chatResponse, expectInvalid, verdict } from './_helpers.js';

describe('notNull', () => {
  it('fails on null, empty or blank content; passes on text', async () => {
    expect(await verdict('notNull', {}, chatResponse(null))).toBe(false);
    expect(await verdict('notNull', {}, chatResponse(''))).toBe(false);
    expect(await verdict('notNull', {}, chatResponse(' \n'))).toBe(false);
    expect(await verdict('notNull', {}, chatResponse('x'))).toBe(true);
    expect(await verdict('notNull', {}, chatResponse('x', 'completions'))).toBe(true);
    expect(await verdict('notNull', {}, chatRequest(''))).toBe(false);
    expect(await verdict('notNull', { not: true }, chatResponse(null))).toBe(true);
  });
  it('takes no parameters but not', () => {
    expectInvalid('notNull', { allowEmpty: true }, '');
  });
});
