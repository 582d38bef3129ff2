import { describe, expect, it } from 'vitest';
import { BootstrapError, parseBootstrap } from '../../src/config/bootstrap.js';
import { declaredId } from '../../src/config/usage-limits.js';
import { thrownBy } from '../helpers/throws.js';

const entry = (extra = '') => `
usage_limits:
  - name: Tokens
    type: tokens
    workspace_id: ws-a
    credit_limit: 1000${extra}
`;

describe('bootstrap usage_limits', () => {
  it('parses entries with the API body\'s schema (defaults applied)', () => {
    const b = parseBootstrap(entry('\n    group_by: [{ key: metadata._user }]'), {});
    expect(b.usage_limits).toEqual([{ name: 'Tokens', type: 'tokens', workspace_id: 'ws-a', credit_limit: 1000, conditions: [], group_by: [{ key: 'metadata._user' }] }]);
    expect(parseBootstrap('api_keys: []', {}).usage_limits).toBeUndefined();
  });

  it('names the bad path: an unknown group_by key, an unknown field, a missing scope, a bad id', () => {
    const msg = (yaml: string) => thrownBy(BootstrapError, () => parseBootstrap(yaml, {})).message;
    expect(msg(entry('\n    group_by: [{ key: user }]'))).toMatch(/usage_limits\[0\]\.group_by\[0\]\.key: unknown key/);
    expect(msg(entry('\n    value_key_usage_map: {}'))).toMatch(/usage_limits\[0\]/);
    expect(msg(entry('\n    id: nope'))).toMatch(/usage_limits\[0\]\.id: must be a UUID/);
    expect(msg(entry().replace('    workspace_id: ws-a\n', ''))).toMatch(/usage_limits\[0\]\.workspace_id: a policy names its workspace_id or organisation_id/);
  });

  it('refuses the same policy twice (same name in the same scope, or the same id)', () => {
    const twice = `${entry()}\n  - { name: Tokens, type: cost, workspace_id: ws-a, credit_limit: 5 }\n`;
    expect(thrownBy(BootstrapError, () => parseBootstrap(twice, {})).message).toMatch(/usage_limits\[1\]: the same policy as usage_limits\[0\]/);
    // the same name in another workspace is another policy
    expect(parseBootstrap(`${entry()}\n  - { name: Tokens, type: cost, workspace_id: ws-b, credit_limit: 5 }\n`, {}).usage_limits).toHaveLength(2);
  });

  it('declaredId: the given id (lower case), else a stable name-based UUID per scope and name', () => {
    expect(declaredId({ id: '0B6C7D2E-3F41-4A5B-8C6D-7E8F9A0B1C2D', name: 'x' })).toBe('0b6c7d2e-3f41-4a5b-8c6d-7e8f9a0b1c2d');
    const a = declaredId({ name: 'Tokens', workspace_id: 'ws-a' });
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(declaredId({ name: 'Tokens', workspace_id: 'ws-a' })).toBe(a);
    expect(declaredId({ name: 'Tokens', workspace_id: 'ws-b' })).not.toBe(a);
    expect(declaredId({ name: 'Tokens', organisation_id: 'ws-a' })).not.toBe(a);
  });
});
