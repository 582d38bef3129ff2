import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../src/errors/codes.js';
import { GatewayError } from '../../src/errors/gateway-error.js';

/** Rows of docs/errors.md's table: | `code` | status | `type` | meaning | */
function readmeRows(): Map<string, { status: string; type: string }> {
  const section = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map<string, { status: string; type: string }>();
  for (const m of section.matchAll(/^\| `([a-z_]+)` \| ([^|]+) \| `([a-z_]+)` \|/gm)) {
    rows.set(m[1]!, { status: m[2]!.trim(), type: m[3]! });
  }
  return rows;
}

describe('error catalog', () => {
  const rows = readmeRows();

  it('the docs/errors.md table lists every catalog code with its status and type', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
      const row = rows.get(code);
      expect(row, `docs/errors.md is missing ${code}`).toBeDefined();
      expect(row!.type).toBe(entry.type);
      // upstream_error passes the provider's status through; the page says so.
      const status = code === 'upstream_error' ? '502 or the upstream status' : String(entry.status);
      expect(row!.status).toBe(status);
    }
  });

  it('docs/errors.md lists no code the catalog does not have', () => {
    for (const code of rows.keys()) expect(Object.keys(ERROR_CATALOG)).toContain(code);
  });

  it('every code has a client or server error status', () => {
    for (const entry of Object.values(ERROR_CATALOG)) {
      expect(entry.status).toBeGreaterThanOrEqual(400);
      expect(entry.status).toBeLessThan(600);
    }
  });

  it('GatewayError renders the OpenAI envelope with trace id and issues', () => {
    const e = new GatewayError('invalid_config', 'bad', { param: 'config.retry', issues: [{ path: ['config', 'retry'], message: 'x' }] });
    expect(e.toBody('t-1')).toEqual({
      error: { message: 'bad', type: 'invalid_request_error', code: 'invalid_config', param: 'config.retry' },
      trace_id: 't-1',
      issues: [{ path: ['config', 'retry'], message: 'x' }],
    });
    const up = new GatewayError('upstream_error', 'slow down', { status: 429, upstreamCode: 'rate_limit_exceeded', upstreamType: 'requests' });
    expect(up.status).toBe(429);
    expect(up.toBody('t')).toMatchObject({ error: { code: 'rate_limit_exceeded', type: 'requests', message: 'slow down' } });
  });
});
