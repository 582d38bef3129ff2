import { describe, expect, it } from 'vitest';
import { chatResponse, expectInvalid, verdict } from './_helpers.js';

describe('endsWith', () => {
  it('passes when the text ends with the suffix (trailing whitespace ignored)', async () => {
    expect(await verdict('endsWith', { suffix: 'END' }, chatResponse('text END  \n'))).toBe(true);
    expect(await verdict('endsWith', { suffix: 'END' }, chatResponse('END text'))).toBe(false);
    expect(await verdict('endsWith', { suffix: 'END', not: true }, chatResponse('END text'))).toBe(true);
  });
  it('refuses a missing or empty suffix', () => {
    expectInvalid('endsWith', {}, 'suffix');
    expectInvalid('endsWith', { suffix: '' }, 'suffix');
  });
});
