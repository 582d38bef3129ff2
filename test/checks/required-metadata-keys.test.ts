import { describe, expect, it } from 'vitest';
import { requestInput } from '../../src/checks/text.js';
import { expectInvalid, run, verdict } from './_helpers.js';

const req = (metadata: Record<string, unknown>) => requestInput({ endpoint: 'chat', body: { messages: [] }, metadata });

describe('requiredMetadataKeys', () => {
  it('all (default): every key present', async () => {
    expect(await verdict('requiredMetadataKeys', { metadataKeys: ['user', 'team'] }, req({ user: 'u', team: 't' }))).toBe(true);
    expect(await run('requiredMetadataKeys', { metadataKeys: ['user', 'team'] }, req({ user: 'u' }))).toEqual({
      verdict: false,
      data: { operator: 'all', found_metadata_keys: ['user'], missing_metadata_keys: ['team'] },
    });
  });
  it('any and none', async () => {
    expect(await verdict('requiredMetadataKeys', { metadataKeys: ['a', 'b'], operator: 'any' }, req({ b: 1 }))).toBe(true);
    expect(await verdict('requiredMetadataKeys', { metadataKeys: ['a', 'b'], operator: 'any' }, req({}))).toBe(false);
    expect(await verdict('requiredMetadataKeys', { metadataKeys: ['a'], operator: 'none' }, req({ a: 1 }))).toBe(false);
    expect(await verdict('requiredMetadataKeys', { metadataKeys: ['toString'], operator: 'all' }, req({}))).toBe(false);
  });
  it('refuses bad parameters (not is not taken: none says it)', () => {
    expectInvalid('requiredMetadataKeys', { metadataKeys: [] }, 'metadataKeys');
    expectInvalid('requiredMetadataKeys', { metadataKeys: ['a'], operator: 'x' }, 'operator');
    expectInvalid('requiredMetadataKeys', { metadataKeys: ['a'], not: true }, '');
  });
});
