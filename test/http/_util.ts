/** Small helpers shared by the HTTP tests (not a test file itself). */
import { randomUUID } from 'node:crypto';
import { vi } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';

export const PROVIDER_KEY = 'sk-provider-secret';

/** A trace id unique to one test request, so its log line can be found. */
export const traceId = (label: string): string => `t-${label}-${randomUUID()}`;

/** Headers that reach `baseUrl` as provider openai through custom_host, with the provider key as bearer. */
export function viaHeaders(gw: TestGateway, baseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return gw.headers({
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': baseUrl,
    authorization: `Bearer ${PROVIDER_KEY}`,
    ...extra,
  });
}

/** The log line of the request with this trace id (waits for it: the line is written on the response's close). */
export async function logLine(gw: TestGateway, trace: string): Promise<Record<string, any>> {
  return vi.waitFor(
    () => {
      const line = gw.logs.find((l) => l.msg === 'request' && l.trace_id === trace);
      if (!line) throw new Error(`no log line for ${trace}`);
      return line;
    },
    { timeout: 5000, interval: 5 },
  );
}

export { chatContent, parseSse, type SseFrame } from '../helpers/sse.js';
