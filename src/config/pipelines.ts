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

/**
 * Every saved config compiled once at start with `compile` (the plan builder, over the bootstrap
 * file's virtual keys and no stored guardrail yet: a config may name any guardrail; a request using
 * one that does not exist gets 404 or 400 then). A config naming a virtual key the deployment has
 * not declared (the shipped examples do) is valid, and requests using it get 404
 * virtual_key_not_found: those are named in one warning. Any other error stops the start, naming
 * the config and the field.
 */
export function checkSavedConfigs(saved: ReadonlyMap<string, Config>, compile: (config: Config) => unknown, warn: (line: Record<string, unknown>) => void): void {
  const needKeys: string[] = [];
  for (const [id, config] of saved) {
    try {
      compile(config);
    } catch (e) {
      if (e instanceof GatewayError && e.code === 'virtual_key_not_found') needKeys.push(id);
      else throw new PipelineError(describeGatewayError(`saved config ${id}`, e));
    }
  }
  if (needKeys.length > 0) {
    warn({ msg: 'saved configs name virtual keys the bootstrap file does not declare; requests using them get 404 unless such a key is made through /v1/virtual-keys', configs: needKeys });
  }
}
