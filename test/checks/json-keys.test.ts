import { describe, expect, it } from 'vitest';
import { chatResponse, expectInvalid, run, verdict } from './_helpers.js';

describe('jsonKeys', () => {
  const answer = chatResponse('{"id":1,"name":"x"}');
  it.each([
    ['any', ['id', 'zzz'], true],
    ['any', ['zzz'], false],
    ['all', ['id', 'name'], true],
    ['all', ['id', 'zzz'], false],
    ['none', ['zzz'], true],
    ['none', ['id'], false],
  ] as const)('%s of %j → %s', async (operator, keys, expected) => {
    expect(await verdict('jsonKeys', { keys, operator }, answer)).toBe(expected);
  });

  it('fails without a JSON object (arrays and text), not inverts', async () => {
    expect(await verdict('jsonKeys', { keys: ['a'] }, chatResponse('[1,2]'))).toBe(false);
    expect(await run('jsonKeys', { keys: ['a'] }, chatResponse('plain'))).toMatchObject({ verdict: false });
    expect(await verdict('jsonKeys', { keys: ['id'], not: true }, answer)).toBe(false);
  });

  it('refuses bad parameters', () => {
    expectInvalid('jsonKeys', { keys: [] }, 'keys');
    expectInvalid('jsonKeys', { keys: ['a'], operator: 'most' }, 'operator');
  });
});
