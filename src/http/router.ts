import type { Exchange } from './exchange.js';

import type { Params } from '../ingress/types.js';

export type { Params } from '../ingress/types.js';

/** A route the hot handler serves (outside express): method, path or pattern, handler. */
export interface HotRoute {
  method: string;
  /** An exact path (`/v1/chat/completions`) or a pattern whose `:name` segments match one segment each. */
  path: string;
  handle: (ex: Exchange, params: Params) => void;
}

export interface RouteMatch<H> {
  readonly handler: H;
  readonly params: Params;
}

const NO_PARAMS: Params = Object.freeze({});
const PARAM = /^:([A-Za-z_][A-Za-z0-9_]*)$/;

interface Pattern<H> {
  path: string;
  re: RegExp;
  names: string[];
  byMethod: Map<string, H>;
}

/**
 * Method + path → handler. Exact paths are a Map lookup per method that allocates nothing (the match
 * object is built once, when the route is added); only a path that misses them is tried against the
 * patterns, in the order they were added. A pattern segment `:name` matches one non-empty segment, and
 * the handler gets it percent-decoded; a segment that does not decode (`%zz`) does not match.
 * `allowed(path)` lists the methods of a path that exists under other methods (for a 405's `Allow`).
 */
export class Router<H> {
  private readonly exact = new Map<string, Map<string, RouteMatch<H>>>();
  /** exact path → its methods, in the order added */
  private readonly exactMethods = new Map<string, string[]>();
  private readonly patterns: Pattern<H>[] = [];

  add(method: string, path: string, handler: H): this {
    if (!path.startsWith('/')) throw new Error(`route ${method} ${path}: a path starts with /`);
    const segments = path.split('/').slice(1);
    const names: string[] = [];
    let source = '^';
    for (const seg of segments) {
      if (seg.startsWith(':')) {
        const m = PARAM.exec(seg);
        if (!m) throw new Error(`route ${method} ${path}: parameter segment "${seg}" must be :name (letters, digits, _)`);
        if (names.includes(m[1]!)) throw new Error(`route ${method} ${path}: parameter :${m[1]} appears twice`);
        names.push(m[1]!);
        source += '/([^/]+)';
      } else {
        source += `/${seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
      }
    }
    if (names.length === 0) {
      let byPath = this.exact.get(method);
      if (!byPath) this.exact.set(method, (byPath = new Map()));
      if (byPath.has(path)) throw new Error(`route ${method} ${path} is added twice`);
      byPath.set(path, { handler, params: NO_PARAMS });
      const methods = this.exactMethods.get(path);
      if (methods) methods.push(method);
      else this.exactMethods.set(path, [method]);
      return this;
    }
    let pattern = this.patterns.find((p) => p.path === path);
    if (!pattern) this.patterns.push((pattern = { path, re: new RegExp(`${source}$`), names, byMethod: new Map() }));
    if (pattern.byMethod.has(method)) throw new Error(`route ${method} ${path} is added twice`);
    pattern.byMethod.set(method, handler);
    return this;
  }

  match(method: string, path: string): RouteMatch<H> | undefined {
    const hit = this.exact.get(method)?.get(path);
    if (hit !== undefined) return hit;
    for (let i = 0; i < this.patterns.length; i++) {
      const p = this.patterns[i]!;
      const handler = p.byMethod.get(method);
      if (handler === undefined) continue;
      const params = paramsOf(p, path);
      if (params !== undefined) return { handler, params };
    }
    return undefined;
  }

  /** The methods a path is served with ("GET, POST"), or undefined when no route has the path. */
  allowed(path: string): string | undefined {
    const methods = [...(this.exactMethods.get(path) ?? [])];
    for (const p of this.patterns) {
      if (paramsOf(p, path) === undefined) continue;
      for (const m of p.byMethod.keys()) if (!methods.includes(m)) methods.push(m);
    }
    return methods.length > 0 ? methods.join(', ') : undefined;
  }
}

function paramsOf(p: Pattern<unknown>, path: string): Params | undefined {
  const m = p.re.exec(path);
  if (m === null) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.names.length; i++) {
    const raw = m[i + 1]!;
    if (raw.indexOf('%') < 0) {
      params[p.names[i]!] = raw;
      continue;
    }
    try {
      params[p.names[i]!] = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
  }
  return params;
}
