import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayError } from '../errors/gateway-error.js';
import { formatPath } from './issues.js';
import { parseConfig, type Config } from './schema.js';

export class PipelineError extends Error {
  override name = 'PipelineError';
}

export function describeGatewayError(source: string, e: unknown): string {
  if (e instanceof GatewayError) {
    const lines = (e.issues ?? []).map((i) => `  ${formatPath(i.path)}: ${i.message}`);
    return `${source}: ${e.message}${lines.length ? `\n${lines.join('\n')}` : ''}`;
  }
  return `${source}: ${(e as Error).message}`;
}

/**
 * Saved configs: `<dir>/<id>.json`, referenced by id in `x-gateway-config`. Every file is parsed and
 * validated here, at start; an invalid one stops the server with the file and field named.
 */
export function loadPipelines(dir: string, required: boolean): Map<string, Config> {
  const out = new Map<string, Config>();
  if (!existsSync(dir)) {
    if (required) throw new PipelineError(`pipelines directory ${dir} does not exist`);
    return out;
  }
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.json')) continue;
    const id = file.slice(0, -'.json'.length);
    if (!/^[A-Za-z0-9_.-]+$/.test(id)) throw new PipelineError(`${join(dir, file)}: config ids use letters, digits, _ . -`);
    const path = join(dir, file);
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(path, 'utf8'));
    } catch (e) {
      throw new PipelineError(`${path}: not valid JSON: ${(e as Error).message}`);
    }
    try {
      out.set(id, parseConfig(json, [file]));
    } catch (e) {
      throw new PipelineError(describeGatewayError(path, e));
    }
  }
  return out;
}
