import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { adminScope, managementScope, ownerScope, withinScope, type Scope } from '../../src/management/common.js';
import type { ApiKeyRecord } from '../../src/security/api-keys.js';

const ADMIN: ApiKeyRecord = { name: 'ops', scopes: ['admin'] };
const ORG_ADMIN: ApiKeyRecord = { name: 'org-ops', organisation_id: 'org-1', scopes: ['admin'] };
const WS: ApiKeyRecord = { name: 'team-a', workspace_id: 'ws-a', organisation_id: 'org-1' };
const WS_NO_ORG: ApiKeyRecord = { name: 'team-b', workspace_id: 'ws-b' };
const ORG_MEMBER: ApiKeyRecord = { name: 'member', organisation_id: 'org-1' };
const NOWHERE: ApiKeyRecord = { name: 'proxy-only' };

/** The error thrown by `f` as [status, code, param], or 'ok'. */
function outcome(f: () => unknown): [number, string, string | null] | 'ok' {
  try {
    f();
    return 'ok';
  } catch (e) {
    const g = e as GatewayError;
    return [g.status, g.code, g.param];
  }
}

describe('managementScope: what a key manages', () => {
  it.each([
    ['an admin key', ADMIN, {}],
    ['an organisation-bound admin key', ORG_ADMIN, { organisation_id: 'org-1' }],
    ['a workspace key', WS, { workspace_id: 'ws-a', organisation_id: 'org-1' }],
    ['a workspace key of no organisation', WS_NO_ORG, { workspace_id: 'ws-b' }],
    ['an admin key bound to a workspace (still every workspace)', { ...WS, scopes: ['admin'] } as ApiKeyRecord, { organisation_id: 'org-1' }],
  ])('%s', (_l, key, scope) => {
    expect(managementScope(key)).toEqual(scope);
  });

  it.each([
    ['a key bound to an organisation only', ORG_MEMBER],
    ['a key bound to nothing', NOWHERE],
    ['no key', undefined],
  ])('%s: 403 forbidden_scope naming the key header', (_l, key) => {
    expect(outcome(() => managementScope(key))).toEqual([403, 'forbidden_scope', 'x-gateway-api-key']);
  });

  it('adminScope: admin keys only', () => {
    expect(adminScope(ORG_ADMIN)).toEqual({ organisation_id: 'org-1' });
    expect(outcome(() => adminScope(WS))).toEqual([403, 'forbidden_scope', 'x-gateway-api-key']);
  });
});

describe('withinScope and ownerScope: what a body or query may name', () => {
  const cases: [string, Scope, Scope, ReturnType<typeof outcome>][] = [
    ['admin names anything', {}, { workspace_id: 'ws-x', organisation_id: 'org-x' }, 'ok'],
    ['org admin names a workspace', { organisation_id: 'org-1' }, { workspace_id: 'ws-x' }, 'ok'],
    ['org admin names another organisation', { organisation_id: 'org-1' }, { organisation_id: 'org-2' }, [403, 'forbidden_scope', 'organisation_id']],
    ['workspace key names its own', { workspace_id: 'ws-a', organisation_id: 'org-1' }, { workspace_id: 'ws-a', organisation_id: 'org-1' }, 'ok'],
    ['workspace key names another workspace', { workspace_id: 'ws-a' }, { workspace_id: 'ws-b' }, [403, 'forbidden_scope', 'workspace_id']],
    ['workspace key of no organisation names one', { workspace_id: 'ws-a' }, { organisation_id: 'org-1' }, [403, 'forbidden_scope', 'organisation_id']],
  ];
  it.each(cases)('%s', (_l, scope, asked, want) => {
    expect(outcome(() => withinScope(asked, scope))).toEqual(want);
  });

  it('places a new resource: the workspace key\'s own, the admin\'s named one (which it must name)', () => {
    expect(ownerScope({}, { workspace_id: 'ws-a', organisation_id: 'org-1' })).toEqual({ workspace_id: 'ws-a', organisation_id: 'org-1' });
    expect(ownerScope({ workspace_id: 'ws-x' }, { organisation_id: 'org-1' })).toEqual({ workspace_id: 'ws-x', organisation_id: 'org-1' });
    expect(ownerScope({ organisation_id: 'org-9' }, {})).toEqual({ organisation_id: 'org-9' });
    expect(outcome(() => ownerScope({}, {}))).toEqual([400, 'invalid_request_body', 'workspace_id']);
    expect(outcome(() => ownerScope({ workspace_id: 'ws-b' }, { workspace_id: 'ws-a' }))).toEqual([403, 'forbidden_scope', 'workspace_id']);
  });
});
