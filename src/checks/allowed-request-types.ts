import { z } from 'zod';
import type { CheckDef, CheckEndpoint } from './types.js';

/** Names accepted for each endpoint: Sluice's and the ones configs for other gateways use. */
const TYPE_NAMES: Record<string, CheckEndpoint> = {
  chat: 'chat',
  chatComplete: 'chat',
  completions: 'completions',
  complete: 'completions',
  embeddings: 'embeddings',
  embed: 'embeddings',
  responses: 'responses',
  createModelResponse: 'responses',
};
const RequestType = z.enum(Object.keys(TYPE_NAMES) as [string, ...string[]]);

const Params = z
  .strictObject({ allowedTypes: z.array(RequestType).optional(), blockedTypes: z.array(RequestType).optional() })
  .superRefine((p, ctx) => {
    const allowed = new Set((p.allowedTypes ?? []).map((t) => TYPE_NAMES[t]));
    const blocked = new Set((p.blockedTypes ?? []).map((t) => TYPE_NAMES[t]));
    if (allowed.size === 0 && blocked.size === 0) ctx.addIssue({ code: 'custom', message: 'give allowedTypes or blockedTypes' });
    for (const t of blocked) if (allowed.has(t)) ctx.addIssue({ code: 'custom', path: ['blockedTypes'], message: `${t} is both allowed and blocked` });
  });
type Params = z.infer<typeof Params>;

/**
 * Passes when the request's endpoint is allowed: not in `blockedTypes`, and in `allowedTypes` when
 * that is given. Names: chat | chatComplete, completions | complete, embeddings | embed, responses | createModelResponse.
 */
export const allowedRequestTypes: CheckDef<Params> = {
  id: 'allowedRequestTypes',
  params: Params,
  phases: ['request'],
  run(input, p) {
    const t = input.endpoint;
    const blocked = (p.blockedTypes ?? []).some((b) => TYPE_NAMES[b] === t);
    const allowed = p.allowedTypes === undefined || p.allowedTypes.some((a) => TYPE_NAMES[a] === t);
    return { verdict: !blocked && allowed, data: { requestType: t, blocked } };
  },
};
