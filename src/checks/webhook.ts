import { z } from 'zod';
import { postedContext } from './context.js';
import { headerMap, httpUrl } from './params.js';
import type { CheckDef, CheckOutcome } from './types.js';

export const MAX_WEBHOOK_TIMEOUT_MS = 30_000;

const Params = z.strictObject({
  webhookURL: httpUrl,
  /** Sent to the webhook as they are (its own credentials); nothing of the client's is added. */
  headers: headerMap.default({}),
  /** Milliseconds. */
  timeout: z.number().int().min(1).max(MAX_WEBHOOK_TIMEOUT_MS).default(3_000),
});
type Params = z.infer<typeof Params>;

const Reply = z.object({
  verdict: z.boolean(),
  data: z.unknown().optional(),
  transformedData: z
    .object({
      request: z.object({ json: z.record(z.string(), z.unknown()).nullable().optional() }).optional(),
      response: z.object({ json: z.unknown().optional() }).optional(),
    })
    .optional(),
});

/**
 * POSTs the context (context.ts: request and response bodies and texts, request type, provider,
 * model, metadata, event type, trace id, the client's headers without any credential) to
 * `webhookURL` through the host guard, with `headers`, within `timeout` ms. The reply's `verdict`
 * (a boolean, required) decides; its `data` is kept; `transformedData.request.json` /
 * `transformedData.response.json` replace the body of that phase (mutator). A non-2xx answer, a
 * reply without a boolean verdict, a redirect, a refused host or the timeout throw (fail closed).
 */
export const webhook: CheckDef<Params> = {
  io: true,
  id: 'webhook',
  params: Params,
  mutator: true,
  async run(input, p, deps, signal) {
    const res = await deps.http.request(p.webhookURL, {
      method: 'POST',
      headers: { ...p.headers, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(postedContext(input)),
      timeoutMs: p.timeout,
      signal,
    });
    const host = new URL(p.webhookURL).host;
    if (res.status < 200 || res.status >= 300) throw new Error(`webhook ${host} answered ${res.status}`);
    let json: unknown;
    try {
      json = JSON.parse(res.text);
    } catch {
      throw new Error(`webhook ${host} did not answer JSON`);
    }
    const reply = Reply.safeParse(json);
    if (!reply.success) throw new Error(`webhook ${host} answered without a boolean verdict`);
    const out: CheckOutcome = { verdict: reply.data.verdict, data: reply.data.data };
    const t = reply.data.transformedData;
    if (input.phase === 'request' && t?.request?.json) out.transformed = { request: { body: t.request.json } };
    if (input.phase === 'response' && t?.response?.json != null) out.transformed = { response: { body: t.response.json } };
    return out;
  },
};
