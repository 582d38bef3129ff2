import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PipelineError, checkSavedConfigs, describeGatewayError, loadPipelines } from '../../src/config/pipelines.js';
import type { Config } from '../../src/config/schema.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { thrownBy } from '../helpers/throws.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-pipelines-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, content: unknown) =>
  writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content, null, 2));

const pipelineError = (fn: () => unknown): PipelineError => thrownBy(PipelineError, fn);

const fallback = {
  strategy: { mode: 'fallback' },
  targets: [{ virtual_key: 'vk-a' }, { virtual_key: 'vk-b' }],
};

describe('loadPipelines', () => {
  it('loads every *.json in the directory, keyed by file name without .json', () => {
    write('fallback-1.json', fallback);
    write('cache.simple.json', { cache: { mode: 'simple', max_age: 60 } });
    write('README.md', '# not a config');
    write('notes.json.bak', '{ broken');
    mkdirSync(join(dir, 'sub'));
    write('sub/x.json', '{ also broken, but in a sub-directory');
    const m = loadPipelines(dir, true);
    expect([...m.keys()].sort()).toEqual(['cache.simple', 'fallback-1']);
    expect(m.get('fallback-1')).toEqual(fallback);
    expect(m.get('cache.simple')).toEqual({ cache: { mode: 'simple', max_age: 60 } });
  });

  it('returns an empty map for an empty directory', () => {
    expect(loadPipelines(dir, true).size).toBe(0);
  });

  it('names the file whose JSON is invalid', () => {
    write('good.json', fallback);
    write('broken.json', '{"strategy": {"mode": "fallback"},');
    const e = pipelineError(() => loadPipelines(dir, false));
    expect(e.message).toContain(join(dir, 'broken.json'));
    expect(e.message).toContain('not valid JSON');
  });

  it('names the file and the field of an invalid config', () => {
    write('bad-retry.json', { retry: { attempts: 99 } });
    const e = pipelineError(() => loadPipelines(dir, false));
    expect(e.message).toContain(join(dir, 'bad-retry.json'));
    expect(e.message).toContain('retry.attempts');
  });

  it('names a nested field with its index', () => {
    write('nested.json', { strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'a' }, { virtual_key: 'b', unknown_field: 1 }] });
    const e = pipelineError(() => loadPipelines(dir, false));
    expect(e.message).toContain('nested.json');
    expect(e.message).toContain('targets[1]');
    expect(e.message).toContain('unknown_field');
  });

  it('refuses a config that meets no required key set', () => {
    write('empty.json', {});
    const e = pipelineError(() => loadPipelines(dir, false));
    expect(e.message).toContain('empty.json');
    expect(e.message).toContain('at least one of these key sets');
  });

  it('refuses a file name that is not a valid config id', () => {
    write('has space.json', fallback);
    const e = pipelineError(() => loadPipelines(dir, false));
    expect(e.message).toContain('has space.json');
    expect(e.message).toContain('config ids use letters');
  });

  it('is fine with a missing directory unless it is required', () => {
    const missing = join(dir, 'does-not-exist');
    expect(loadPipelines(missing, false).size).toBe(0);
    const e = pipelineError(() => loadPipelines(missing, true));
    expect(e.message).toContain(missing);
    expect(e.message).toContain('does not exist');
  });
});

describe('describeGatewayError', () => {
  it('lists the issues with their paths', () => {
    const e = new GatewayError('invalid_config', 'Invalid config: x', {
      issues: [
        { path: ['f.json', 'targets', 0, 'retry'], message: 'bad' },
        { path: ['f.json', 'cache'], message: 'worse' },
      ],
    });
    expect(describeGatewayError('src', e)).toBe('src: Invalid config: x\n  f.json.targets[0].retry: bad\n  f.json.cache: worse');
  });

  it('uses the message of any other error', () => {
    expect(describeGatewayError('src', new Error('plain'))).toBe('src: plain');
  });
});

describe('checkSavedConfigs', () => {
  const saved = new Map<string, Config>([
    ['ok', { virtual_key: 'vk-a' }],
    ['undeclared', { virtual_key: 'vk-missing' }],
  ]);
  /** A plan builder that knows vk-a only, and refuses a config it cannot build. */
  const compile = (config: Config): void => {
    if (config.virtual_key === 'vk-missing') throw new GatewayError('virtual_key_not_found');
    if (config.virtual_key !== 'vk-a') throw new GatewayError('invalid_config', 'Invalid config: x', { issues: [{ path: ['retry'], message: 'bad' }] });
  };

  it('compiles every config; those naming an undeclared virtual key are valid, named in one warning', () => {
    const warnings: Record<string, unknown>[] = [];
    checkSavedConfigs(saved, compile, (line) => warnings.push(line));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.configs).toEqual(['undeclared']);
    expect(String(warnings[0]!.msg)).toContain('/v1/virtual-keys');
  });

  it('warns of nothing when every config builds', () => {
    const warnings: unknown[] = [];
    checkSavedConfigs(new Map([['ok', { virtual_key: 'vk-a' }]]), compile, (line) => warnings.push(line));
    expect(warnings).toEqual([]);
  });

  it('stops the start on any other error, naming the config and the field', () => {
    const e = pipelineError(() => checkSavedConfigs(new Map([...saved, ['broken', { virtual_key: 'vk-b' }]]), compile, () => {}));
    expect(e.message).toBe('saved config broken: Invalid config: x\n  retry: bad');
  });
});
