import { Observable, type OperatorFunction, type Subscriber, type Subscription } from 'rxjs';
import type { RequestContext } from '../../pipeline/context.js';
import type { GatewayEvent } from '../../upstream/events.js';
import type { AppDeps } from '../deps.js';
import type { Exchange } from '../exchange.js';
import { parseRequest, type ParseRoute } from '../parse-request.js';
import { respond } from '../respond.js';
import type { Params } from '../router.js';

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
