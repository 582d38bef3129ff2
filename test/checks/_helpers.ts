import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { CheckHttpError, type CheckHttp } from '../../src/checks/http.js';
import { JwksCache } from '../../src/checks/jwks.js';
import { resolveCheck, runCheck } from '../../src/checks/registry.js';
import { requestInput, responseInput } from '../../src/checks/text.js';
import type { CheckDeps, CheckEndpoint, CheckInput, CheckOutcome } from '../../src/checks/types.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { thrownBy } from '../helpers/throws.js';

/** An HTTP client that must not be used (the check under test makes no calls). */
export const noHttp: CheckHttp = {
  request: () => Promise.reject(new CheckHttpError('host_refused', 'no network in this test')),
  resolve: () => Promise.reject(new CheckHttpError('host_refused', 'no network in this test')),
};

export function deps(over: Partial<CheckDeps> = {}): CheckDeps {
  return { now: () => Date.now(), http: noHttp, jwks: new JwksCache(), allowUrlLookups: false, ...over };
}

/** A chat request whose last message is the user's `text`. */
export function chatRequest(text: string, extra: Partial<Parameters<typeof requestInput>[0]> = {}): CheckInput {
  return requestInput({ endpoint: 'chat', body: { model: 'gpt-4o', messages: [{ role: 'user', content: text }] }, ...extra });
}

/** A chat answer with content `text` (request: "q"). */
export function chatResponse(text: string | null, endpoint: CheckEndpoint = 'chat'): CheckInput {
  const body =
    endpoint === 'chat'
      ? { choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] }
      : { choices: [{ index: 0, text, finish_reason: 'stop' }] };
  return responseInput({
    endpoint,
    body: endpoint === 'chat' ? { model: 'gpt-4o', messages: [{ role: 'user', content: 'q' }] } : { model: 'x', prompt: 'q' },
    response: { body, status: 200 },
  });
}

const never = new AbortController().signal;

/** Validates and runs a check as a stage would. */
export async function run(id: string, params: unknown, input: CheckInput, d: CheckDeps = deps()): Promise<CheckOutcome> {
  return runCheck(resolveCheck(id, params, 'hooks.0.checks.0.parameters'), input, d, never);
}

export async function verdict(id: string, params: unknown, input: CheckInput, d?: CheckDeps): Promise<boolean> {
  return (await run(id, params, input, d)).verdict;
}

/** resolveCheck refuses `params`: a 400 invalid_config whose issues name `field` under the path. */
export function expectInvalid(id: string, params: unknown, field: string, message?: RegExp): GatewayError {
  const e = thrownBy(GatewayError, () => resolveCheck(id, params, 'hooks.0.checks.0.parameters'));
  expect(e.code).toBe('invalid_config');
  expect(e.status).toBe(400);
  expect(e.param).toBe('hooks.0.checks.0.parameters');
  const paths = (e.issues ?? []).map((i) => i.path.join('.'));
  expect(paths).toContain(field === '' ? 'hooks.0.checks.0.parameters' : `hooks.0.checks.0.parameters.${field}`);
  if (message) expect(e.message).toMatch(message);
  return e;
}

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A real HTTP server on 127.0.0.1:0 that records requests and answers with `handler`. */
export async function localServer(
  handler: (req: Received, res: ServerResponse) => void,
): Promise<{ url: string; port: number; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      received.push(r);
      handler(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
