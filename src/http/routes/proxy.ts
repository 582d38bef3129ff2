import { Observable, type OperatorFunction, type Subscriber, type Subscription } from 'rxjs';
import type { RequestContext } from '../../pipeline/context.js';
import type { GatewayEvent } from '../../upstream/events.js';
import type { AppDeps } from '../deps.js';
import type { Exchange } from '../exchange.js';
import { parseRequest, type ParseRoute } from '../parse-request.js';
import { respond } from '../respond.js';
import type { HotRoute, Params } from '../router.js';
import type { IngressFormat } from '../../ingress/types.js';

/** The pipeline's entry (src/pipeline/run-request.ts): a parsed request → its answer. */
export type RunRequest = (ctx: RequestContext) => Observable<GatewayEvent>;

/**
 * The route every proxied endpoint shares: the edge parses the exchange (src/http/parse-request.ts),
 * the pipeline runs the parsed request, the writer writes its events (src/http/respond.ts). No
 * provider names, no strategy branches. `answer`, when given, makes the route's answer from the
 * pipeline's (with the path parameters).
 */
export function proxyRoute(
  route: ParseRoute,
  deps: AppDeps,
  run: RunRequest,
  answer?: (params: Params) => OperatorFunction<GatewayEvent, GatewayEvent>,
): (ex: Exchange, params: Params) => void {
  const framing = route.format.framing;
  // One Observable per request: parsed, then answered. Unsubscribing (the client left) drops a late
  // parse; the callback holds the subscriber only until it is called or unsubscribed (reading the
  // body, it sits on the request, which outlives the answer on a kept-alive socket).
  const events = (ex: Exchange): Observable<GatewayEvent> =>
    new Observable<GatewayEvent>((subscriber) => {
      let target: Subscriber<GatewayEvent> | undefined = subscriber;
      let answered: Subscription | undefined;
      parseRequest(ex, route, deps, (err, ctx) => {
        const s = target;
        target = undefined;
        if (!s || s.closed) return;
        if (ctx === undefined) return s.error(err);
        try {
          answered = run(ctx!).subscribe(s);
        } catch (e) {
          s.error(e);
        }
      });
      return () => {
        target = undefined;
        answered?.unsubscribe();
      };
    });
  const stallMs = deps.pipeline.streamIdleTimeoutMs;
  if (answer) {
    return (ex, params) => {
      ex.framing = framing;
      respond(events(ex).pipe(answer(params)), ex, stallMs);
    };
  }
  return (ex) => {
    ex.framing = framing;
    respond(events(ex), ex, stallMs);
  };
}

type Handle = (ex: Exchange, params: Params) => void;

/**
 * The hot routes of `formats`: each route of each format, proxied. A format `selectedBy` a header
 * serves a route in place of the format without one when the request carries that header.
 */
export function ingressRoutes(formats: readonly IngressFormat[], deps: AppDeps, run: RunRequest): HotRoute[] {
  const byRoute = new Map<string, { method: string; path: string; plain?: Handle; picks: [string, Handle][] }>();
  for (const format of formats) {
    for (const r of format.routes) {
      const key = `${r.method} ${r.path}`;
      let entry = byRoute.get(key);
      if (!entry) byRoute.set(key, (entry = { method: r.method, path: r.path, picks: [] }));
      const handle = proxyRoute({ format, pathname: r.pathname ?? r.path }, deps, run, r.answer);
      if (format.selectedBy === undefined) entry.plain = handle;
      else entry.picks.push([format.selectedBy, handle]);
    }
  }
  return [...byRoute.values()].map(({ method, path, plain, picks }) => {
    if (!plain) throw new Error(`route ${method} ${path}: only formats selected by a header serve it`);
    if (picks.length === 0) return { method, path, handle: plain };
    const handle: Handle = (ex, params) => {
      for (const [header, h] of picks) if (ex.req.headers[header] !== undefined) return h(ex, params);
      plain(ex, params);
    };
    return { method, path, handle };
  });
}
