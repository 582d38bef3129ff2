/**
 * The four hook and guardrail lists of a config level → one compiled form, `HookSpec`, validated when
 * the config is (an unknown check id or bad parameters is a 400 naming the path). Both config forms
 * compile to it: full hook objects (`before_request_hooks`, `after_request_hooks`: id, type, checks,
 * on_fail, on_success, async) and guardrail entries (`input_guardrails`, `output_guardrails`: the extra
 * keys are check ids with their parameters; deny, async, on_fail, on_success). String entries name a
 * stored guardrail: resolved through `lookupGuardrail` (the guardrails store), else a 400.
 */
import { GatewayError } from '../errors/gateway-error.js';
import { resolveCheck, type ResolvedCheck } from '../checks/registry.js';
import { DEFAULT_CHECK_TIMEOUT_MS, type Feedback, type HookList, type HookSpec } from '../checks/hooks.js';
import type { Config } from '../config/schema.js';

/**
 * A stored guardrail by id or slug (the latest version, or the pinned `versionId`): its checks,
 * whether a failing check denies, and the message a denial carries. Undefined when unknown.
 * Synchronous: plans are built without I/O.
 */
export type GuardrailLookup = (
  idOrSlug: string,
  versionId?: string,
  /** The scope of the request's gateway key: only guardrails visible to it resolve (none: every one). */
  scope?: { workspace_id?: string | undefined; organisation_id?: string | undefined },
) => { checks: { id: string; parameters: Record<string, unknown> }[]; denyOnFail?: boolean; message?: string } | undefined;

/** Keys of a guardrail entry that are not check ids. */
const ENTRY_KEYS = new Set(['id', 'version_id', 'deny', 'async', 'on_fail', 'on_success', 'fail_on_error', 'sequential', 'timeout']);

type Entry = string | Record<string, unknown>;

function entryOptions(o: Record<string, unknown>, path: string): Pick<HookSpec, 'failOnError' | 'sequential' | 'timeoutMs'> {
  const timeout = o.timeout;
  if (timeout !== undefined && !(typeof timeout === 'number' && Number.isInteger(timeout) && timeout > 0 && timeout <= 60_000)) {
    throw new GatewayError('invalid_config', `${path}.timeout must be whole milliseconds from 1 to 60000.`, { param: `${path}.timeout` });
  }
  for (const k of ['fail_on_error', 'sequential'] as const) {
    if (o[k] !== undefined && typeof o[k] !== 'boolean') throw new GatewayError('invalid_config', `${path}.${k} must be true or false.`, { param: `${path}.${k}` });
  }
  return {
    failOnError: o.fail_on_error !== false,
    sequential: o.sequential === true,
    timeoutMs: (timeout as number | undefined) ?? DEFAULT_CHECK_TIMEOUT_MS,
  };
}

function typeOf(checks: ResolvedCheck[], declared: unknown): 'guardrail' | 'mutator' {
  if (declared === 'mutator' || declared === 'guardrail') return declared;
  return checks.length > 0 && checks.every((c) => c.def.mutator) ? 'mutator' : 'guardrail';
}

function phaseOf(list: HookList): 'request' | 'response' {
  return list === 'input_guardrails' || list === 'before_request_hooks' ? 'request' : 'response';
}

/** `config.targets[1].input_guardrails[0]` → its segments, so a check id with a dot stays one segment. */
function segments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return out;
}

function resolveChecks(checks: { id: string; parameters: unknown }[], path: string, list: HookList): ResolvedCheck[] {
  const phase = phaseOf(list);
  return checks.map((c, i) => resolveCheck(c.id, c.parameters, [...segments(path), i, 'parameters'], phase));
}

function compileEntry(entry: Entry, list: HookList, path: string, lookup: GuardrailLookup | undefined): HookSpec {
  // A string, or an object with an id and no check of its own: a stored guardrail (a version pinned
  // with version_id, else the latest).
  if (typeof entry === 'string' || (typeof entry.id === 'string' && Object.keys(entry).every((k) => ENTRY_KEYS.has(k)))) {
    const idOrSlug = typeof entry === 'string' ? entry : (entry.id as string);
    const version = typeof entry === 'string' ? undefined : (entry.version_id as string | undefined);
    const stored = lookup?.(idOrSlug, version);
    if (!stored) {
      throw new GatewayError('invalid_config', `${path} names the guardrail "${idOrSlug}"${version ? ` version ${version}` : ''}, which does not exist.`, { param: path });
    }
    const checks = resolveChecks(stored.checks, `${path}.checks`, list);
    const o = typeof entry === 'string' ? {} : entry;
    return {
      id: idOrSlug,
      list,
      path,
      type: typeOf(checks, undefined),
      checks,
      denyOnFail: (o.deny as boolean | undefined) ?? stored.denyOnFail ?? false,
      denyOnSuccess: false,
      async: o.async === true,
      ...entryOptions(o, path),
    };
  }
  const checks: { id: string; parameters: unknown }[] = [];
  for (const [k, v] of Object.entries(entry)) if (!ENTRY_KEYS.has(k)) checks.push({ id: k, parameters: v });
  if (checks.length === 0) throw new GatewayError('invalid_config', `${path} names no check.`, { param: path });
  const resolved = checks.map((c) => resolveCheck(c.id, c.parameters, [...segments(path), c.id], phaseOf(list)));
  const onFail = entry.on_fail as { feedback?: Feedback; deny?: boolean } | undefined;
  const onSuccess = entry.on_success as { feedback?: Feedback; deny?: boolean } | undefined;
  const spec: HookSpec = {
    id: typeof entry.id === 'string' ? entry.id : path.slice(path.lastIndexOf('.') + 1),
    list,
    path,
    type: typeOf(resolved, undefined),
    checks: resolved,
    denyOnFail: entry.deny === true || onFail?.deny === true,
    denyOnSuccess: onSuccess?.deny === true,
    async: entry.async === true,
    ...entryOptions(entry, path),
  };
  if (onFail?.feedback) spec.onFail = onFail.feedback;
  if (onSuccess?.feedback) spec.onSuccess = onSuccess.feedback;
  return spec;
}

type HookObject = NonNullable<Config['before_request_hooks']>[number] & Record<string, unknown>;

function compileHook(hook: HookObject, list: HookList, path: string): HookSpec {
  const checks = resolveChecks(hook.checks ?? [], `${path}.checks`, list);
  const onFail = hook.on_fail as { feedback?: Feedback; deny?: boolean } | undefined;
  const onSuccess = hook.on_success as { feedback?: Feedback; deny?: boolean } | undefined;
  if (hook.type !== undefined && hook.type !== 'guardrail' && hook.type !== 'mutator') {
    throw new GatewayError('invalid_config', `${path}.type must be "guardrail" or "mutator".`, { param: `${path}.type` });
  }
  const spec: HookSpec = {
    id: hook.id,
    list,
    path,
    type: typeOf(checks, hook.type),
    checks,
    denyOnFail: onFail?.deny === true,
    denyOnSuccess: onSuccess?.deny === true,
    async: (hook as { async?: boolean }).async === true,
    ...entryOptions(hook, path),
  };
  if (onFail?.feedback) spec.onFail = onFail.feedback;
  if (onSuccess?.feedback) spec.onSuccess = onSuccess.feedback;
  return spec;
}

/** One config list → its compiled hooks. */
export function compileHooks(list: HookList, items: readonly unknown[] | undefined, path: string, lookup?: GuardrailLookup): HookSpec[] {
  if (!items || items.length === 0) return [];
  return items.map((item, i) => {
    const p = `${path}.${list}[${i}]`;
    return list === 'input_guardrails' || list === 'output_guardrails' ? compileEntry(item as Entry, list, p, lookup) : compileHook(item as HookObject, list, p);
  });
}

/** A plan node's compiled hooks, from its settings (own or inherited). */
export interface NodeHooks {
  input_guardrails: HookSpec[];
  before_request_hooks: HookSpec[];
  output_guardrails: HookSpec[];
  after_request_hooks: HookSpec[];
}

const EMPTY: NodeHooks = Object.freeze({ input_guardrails: [], before_request_hooks: [], output_guardrails: [], after_request_hooks: [] });
const byNode = new WeakMap<object, NodeHooks>();
/** Inherited lists are the parent's own array objects: compiled once, shared by every child. */
const byList = new WeakMap<readonly unknown[], HookSpec[]>();

const LISTS: readonly HookList[] = ['input_guardrails', 'before_request_hooks', 'output_guardrails', 'after_request_hooks'];

/**
 * Compile (and so validate) the hook lists of a plan node's settings, before its children are built
 * (so an inherited list is compiled, and named in errors, at the level that declares it). Kept beside
 * the node (setHooks), not on it, so the plan stays plain data (`sluice plan` prints it).
 */
export function compileSettingsHooks(settings: Partial<Record<HookList, readonly unknown[] | undefined>>, path: string, lookup?: GuardrailLookup): NodeHooks | undefined {
  let hooks: NodeHooks | undefined;
  for (const list of LISTS) {
    const items = settings[list];
    if (!items || items.length === 0) continue;
    let compiled = byList.get(items);
    if (!compiled) {
      compiled = compileHooks(list, items, path, lookup);
      byList.set(items, compiled);
    }
    (hooks ??= { ...EMPTY })[list] = compiled;
  }
  return hooks;
}

/** Keep a node's compiled hooks beside it. */
export function setHooks(node: object, hooks: NodeHooks | undefined): void {
  if (hooks) byNode.set(node, hooks);
}

/** The node's compiled hooks (empty lists when it has none). */
export function hooksOf(node: object): NodeHooks {
  return byNode.get(node) ?? EMPTY;
}
