import { GatewayError } from '../errors/gateway-error.js';
import { compileBoundedRegex, testBoundedPrefix, type BoundedRegex } from '../util/bounded-regex.js';

/** What a conditional query can look at. */
export interface QueryInput {
  metadata: Record<string, unknown> | undefined;
  params: Record<string, unknown> | undefined;
  url: { pathname: string };
}

export type Predicate = (input: QueryInput) => boolean;

function bad(path: string, message: string): never {
  throw new GatewayError('invalid_config', `${path}: ${message}`, { param: path, issues: [{ path: path.split('.'), message }] });
}

/** `metadata.user.plan`, `params.messages.0.role`, `url.pathname`: a getter, split once. */
function getter(field: string, path: string): (input: QueryInput) => unknown {
  const parts = field.split('.');
  const root = parts[0];
  if (root !== 'metadata' && root !== 'params' && root !== 'url') {
    bad(path, `"${field}" must start with metadata., params. or url.`);
  }
  if (root === 'url' && field !== 'url.pathname') bad(path, `only url.pathname can be queried, not "${field}"`);
  const rest = parts.slice(1);
  return (input) => {
    let cur: unknown = input[root as keyof QueryInput];
    for (const p of rest) {
      // Own properties only: `metadata.constructor` is absent from a request, not Object's constructor.
      if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, p)) return undefined;
      cur = (cur as Record<string, unknown>)[p];
    }
    return cur;
  };
}

const cmp = (a: unknown, b: unknown): number | undefined => {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
};
const eq = (a: unknown, b: unknown): boolean =>
  a === b || (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && JSON.stringify(a) === JSON.stringify(b));

function compileOperator(op: string, arg: unknown, get: (i: QueryInput) => unknown, path: string): Predicate {
  switch (op) {
    case '$eq':
      return (i) => eq(get(i), arg);
    case '$ne':
      return (i) => !eq(get(i), arg);
    case '$gt':
      return (i) => (cmp(get(i), arg) ?? -1) > 0;
    case '$gte':
      return (i) => (cmp(get(i), arg) ?? -1) >= 0;
    case '$lt':
      return (i) => (cmp(get(i), arg) ?? 1) < 0;
    case '$lte':
      return (i) => (cmp(get(i), arg) ?? 1) <= 0;
    case '$in':
    case '$nin': {
      if (!Array.isArray(arg)) bad(path, `${op} takes an array`);
      const neg = op === '$nin';
      return (i) => {
        const v = get(i);
        const hit = arg.some((a) => eq(v, a) || (Array.isArray(v) && v.some((x) => eq(x, a))));
        return neg ? !hit : hit;
      };
    }
    case '$exists':
      if (typeof arg !== 'boolean') bad(path, '$exists takes true or false');
      return (i) => (get(i) !== undefined) === arg;
    case '$regex': {
      let re: BoundedRegex;
      try {
        re = compileBoundedRegex(arg, '$regex');
      } catch (e) {
        bad(path, (e as Error).message);
      }
      return (i) => {
        const v = get(i);
        return typeof v === 'string' && testBoundedPrefix(re, v);
      };
    }
    case '$not': {
      const inner = compileFieldCondition(arg, get, path);
      return (i) => !inner(i);
    }
    default:
      bad(path, `unknown operator ${op}`);
  }
}

function compileFieldCondition(cond: unknown, get: (i: QueryInput) => unknown, path: string): Predicate {
  if (cond !== null && typeof cond === 'object' && !Array.isArray(cond)) {
    const entries = Object.entries(cond);
    if (entries.length > 0 && entries.every(([k]) => k.startsWith('$'))) {
      const preds = entries.map(([op, arg]) => compileOperator(op, arg, get, `${path}.${op}`));
      return (i) => preds.every((p) => p(i));
    }
  }
  return (i) => eq(get(i), cond);
}

/**
 * A Mongo-style query → a predicate, validated at plan time. Fields: `metadata.*`, `params.*` (any
 * depth) and `url.pathname`; operators $eq $ne $gt $gte $lt $lte $in $nin $regex $exists $and $or
 * $not. A plain value means $eq. Regex patterns run on RE2 (linear time); they and the text they test are length-capped.
 */
export function compileQuery(query: unknown, path: string): Predicate {
  if (query === null || typeof query !== 'object' || Array.isArray(query)) bad(path, 'a query is an object');
  const preds: Predicate[] = [];
  for (const [key, value] of Object.entries(query)) {
    const p = `${path}.${key}`;
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || value.length === 0) bad(p, `${key} takes a non-empty array of queries`);
      const subs = value.map((q, i) => compileQuery(q, `${p}.${i}`));
      preds.push(key === '$and' ? (i) => subs.every((s) => s(i)) : (i) => subs.some((s) => s(i)));
    } else if (key === '$not') {
      const sub = compileQuery(value, p);
      preds.push((i) => !sub(i));
    } else if (key.startsWith('$')) {
      bad(p, `unknown top-level operator ${key}`);
    } else {
      preds.push(compileFieldCondition(value, getter(key, p), p));
    }
  }
  return (i) => preds.every((p) => p(i));
}
