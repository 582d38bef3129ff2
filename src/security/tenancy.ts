/**
 * Tenancy: who may see and use what. The one place that says how a scope compares with another.
 *
 * A tenant is the pair (organisation, workspace). A workspace id means something only inside its
 * organisation: the workspace `ws-1` of `org-1` and the workspace `ws-1` of `org-2` are two
 * workspaces with nothing in common, and a key or resource with a workspace and no organisation
 * lives in a third one (the workspace `ws-1` of no organisation). So a workspace belongs to exactly
 * one organisation by construction, nobody has to claim a name first, and naming a workspace id that
 * another organisation uses reveals nothing: it names a workspace of one's own organisation.
 *
 * Three scopes a caller can have (from its gateway key):
 * - a workspace (`workspace_id`, with its `organisation_id` or none): that pair only;
 * - an organisation only (an organisation's admin key): every workspace of that organisation, and
 *   the organisation-wide resources (those with no workspace);
 * - none (an unbound admin key, for management): everything.
 */

/** Where something lives, or whose key is asking. Absent fields are absent, never empty strings. */
export interface TenantScope {
  workspace_id?: string | undefined;
  organisation_id?: string | undefined;
}

/** Do two scopes name the same (organisation, workspace) pair? */
export function sameTenant(a: TenantScope, b: TenantScope): boolean {
  return a.workspace_id === b.workspace_id && a.organisation_id === b.organisation_id;
}

/**
 * May a manager with scope `caller` see and change something living in `owner` (the management
 * APIs, the logs)? No caller, or an empty one (an unbound admin key): everything. A workspace caller:
 * its own pair only (the same workspace id in another organisation, or in none, is another tenant).
 * An organisation caller: whatever lives in its organisation.
 */
export function visibleTo(owner: TenantScope, caller: TenantScope | undefined): boolean {
  if (!caller) return true;
  if (caller.workspace_id !== undefined) return sameTenant(owner, caller);
  if (caller.organisation_id !== undefined) return owner.organisation_id === caller.organisation_id;
  return true;
}

/** A request's gateway key as tenancy reads it: its scope, and whether it is an admin key. */
export interface RequestCaller extends TenantScope {
  readonly scopes?: readonly string[] | undefined;
}

/**
 * May a proxied request whose gateway key is `caller` use a stored prompt or guardrail living in
 * `owner`? As `visibleTo`, except for a key bound to nothing (neither workspace nor organisation):
 * an admin key (the operator's, which manages every tenant) uses any, any other key only what is
 * bound to nothing (it manages nothing, so it has no tenant to use). No caller at all (operator
 * tools such as `sluice plan`): everything.
 */
export function usableBy(owner: TenantScope, caller: RequestCaller | undefined): boolean {
  if (!caller) return true;
  if (caller.workspace_id === undefined && caller.organisation_id === undefined && caller.scopes?.includes('admin') !== true) {
    return owner.workspace_id === undefined && owner.organisation_id === undefined;
  }
  return visibleTo(owner, caller);
}

/**
 * The scope's identity as a string (a map key, a Redis key part): equal exactly when `sameTenant`.
 * A workspace of no organisation and an organisation-wide scope keep the forms they always had
 * (`w:<ws>`, `o:<org>`); a workspace of an organisation is `ow:` and the JSON of the pair (JSON so
 * that no pair of ids, whatever characters they hold, reads as another). `-` for no scope.
 */
export function tenantKey(s: TenantScope): string {
  if (s.workspace_id !== undefined) return s.organisation_id === undefined ? `w:${s.workspace_id}` : `ow:${JSON.stringify([s.organisation_id, s.workspace_id])}`;
  if (s.organisation_id !== undefined) return `o:${s.organisation_id}`;
  return '-';
}
