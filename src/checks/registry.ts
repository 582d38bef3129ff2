/**
 * Check ids → CheckDef, parameter validation at config time, and running a validated check.
 *
 * Ids are `default.<name>`; a bare `<name>` means `default.<name>`, so configs written for other
 * gateways keep working. `resolveCheck` is what the plan builder calls for every check of every
 * hook and guardrail entry: an unknown id or bad parameters are a 400 invalid_config naming the
 * path, never a silent pass.
 */
import { formatPath } from '../config/issues.js';
import { GatewayError, type Issue } from '../errors/gateway-error.js';
import { declareSecretFields } from '../security/redact.js';
import { addPrefix } from './add-prefix.js';
import { alllowercase } from './all-lowercase.js';
import { alluppercase } from './all-uppercase.js';
import { allowedRequestTypes } from './allowed-request-types.js';
import { characterCount } from './character-count.js';
import { containsCode } from './contains-code.js';
import { contains } from './contains.js';
import { endsWith } from './ends-with.js';
import { jsonKeys } from './json-keys.js';
import { jsonSchema } from './json-schema.js';
import { jwt } from './jwt.js';
import { log } from './log.js';
import { modelRules } from './model-rules.js';
import { modelWhitelist } from './model-whitelist.js';
import { notNull } from './not-null.js';
import { pii } from './pii.js';
import { regexMatch } from './regex-match.js';
import { regexReplace } from './regex-replace.js';
import { requiredMetadataKeys } from './required-metadata-keys.js';
import { sentenceCount } from './sentence-count.js';
import type { CheckDef, CheckDeps, CheckInput, CheckOutcome, CheckPhase } from './types.js';
import { validUrls } from './valid-urls.js';
import { webhook } from './webhook.js';
import { wordCount } from './word-count.js';

export const NAMESPACE = 'default';

const DEFS: CheckDef<any>[] = [
  regexMatch,
  regexReplace,
  contains,
  wordCount,
  sentenceCount,
  characterCount,
  jsonSchema,
  jsonKeys,
  containsCode,
  validUrls,
  endsWith,
  alluppercase,
  alllowercase,
  notNull,
  modelWhitelist,
  modelRules,
  allowedRequestTypes,
  requiredMetadataKeys,
  addPrefix,
  jwt,
  webhook,
  log,
  pii,
];

/** `default.<name>` → its CheckDef. */
export const CHECKS: ReadonlyMap<string, CheckDef<unknown>> = new Map(DEFS.map((d) => [`${NAMESPACE}.${d.id}`, d]));

// The parameters a check's schema marks secret (a receiver's headers) are redacted wherever printed.
for (const d of DEFS) declareSecretFields(d.params);

/** `regexMatch` → `default.regexMatch`; an id with a namespace is returned as it is. */
export function canonicalCheckId(id: string): string {
  return id.includes('.') ? id : `${NAMESPACE}.${id}`;
}

/** A check validated at config time: what the stage operators run per request. */
export interface ResolvedCheck {
  /** The canonical id, `default.<name>`. */
  id: string;
  def: CheckDef<unknown>;
  /** The parameters as the check's schema returned them (defaults applied), without `not`. */
  params: unknown;
  /** Invert the verdict (only for checks that support it). */
  not: boolean;
  /** The config path the check came from, for errors and logs. */
  path: string;
}

type Path = string | readonly (string | number)[];

function pathParts(path: Path): (string | number)[] {
  return typeof path === 'string' ? path.split('.') : [...path];
}

/** As config errors name paths: `config.input_guardrails[0].default.regexMatch` (a segment may hold a dot). */
function pathString(path: Path): string {
  return typeof path === 'string' ? path : formatPath(path);
}

function invalid(path: Path, message: string, issues: Issue[]): never {
  throw new GatewayError('invalid_config', `${pathString(path)}: ${message}`, { param: pathString(path), issues });
}

/**
 * Validates one check of a config. `path` names where its parameters sit (e.g.
 * `before_request_hooks.0.checks.1.parameters`, or an array of segments when a segment holds a dot);
 * `phase`, when given, refuses a check that makes no sense there (jwt after the answer).
 * @throws GatewayError invalid_config with `param` = the path and `issues` naming every bad field.
 */
export function resolveCheck(id: string, params: unknown, path: Path, phase?: CheckPhase): ResolvedCheck {
  const canonical = canonicalCheckId(id);
  const def = CHECKS.get(canonical);
  const base = pathParts(path);
  if (!def) {
    const message = `unknown check id "${id}"; known ids: ${[...CHECKS.keys()].join(', ')}`;
    invalid(path, message, [{ path: base, message }]);
  }
  if (phase && def.phases && !def.phases.includes(phase)) {
    const message = `check ${canonical} runs only on the ${def.phases.join(' or ')}, not on the ${phase}`;
    invalid(path, message, [{ path: base, message }]);
  }
  const raw = params ?? {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    invalid(path, `the parameters of ${canonical} must be an object`, [{ path: base, message: 'expected an object' }]);
  }
  let rest = raw as Record<string, unknown>;
  let not = false;
  if (def.supportsNot && 'not' in rest) {
    const { not: n, ...others } = rest;
    if (typeof n !== 'boolean') invalid(path, `${canonical}: not must be true or false`, [{ path: [...base, 'not'], message: 'expected a boolean' }]);
    not = n;
    rest = others;
  }
  const parsed = def.params.safeParse(rest);
  if (!parsed.success) {
    const issues: Issue[] = parsed.error.issues.map((i) => ({
      path: [...base, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
      message: i.message,
      code: i.code,
    }));
    const first = issues[0]!;
    invalid(path, `invalid parameters for ${canonical}: ${first.path.slice(base.length).join('.') || '(parameters)'}: ${first.message}`, issues);
  }
  return { id: canonical, def, params: parsed.data, not, path: pathString(path) };
}

/**
 * Runs a resolved check once and applies `not`. Throws what the check throws: the caller turns a
 * throw, a rejection or its own time limit (abort `signal`) into a failed check with `error`.
 */
export async function runCheck(check: ResolvedCheck, input: CheckInput, deps: CheckDeps, signal: AbortSignal): Promise<CheckOutcome> {
  return applyNot(check, await check.def.run(input, check.params, deps, signal));
}

/** The outcome with `not` applied: the verdict inverted, the rest kept. */
export function applyNot(check: ResolvedCheck, o: CheckOutcome): CheckOutcome {
  if (!check.not) return o;
  // A shared (frozen) outcome has a shared inverse, made once.
  if (Object.isFrozen(o)) {
    let inverse = INVERSES.get(o);
    if (!inverse) INVERSES.set(o, (inverse = Object.freeze(inverted(o))));
    return inverse;
  }
  return inverted(o);
}

/** The inverses of shared outcomes (a check's constant "no match"), by outcome. */
const INVERSES = new WeakMap<CheckOutcome, CheckOutcome>();

function inverted(o: CheckOutcome): CheckOutcome {
  return { ...o, verdict: !o.verdict };
}
