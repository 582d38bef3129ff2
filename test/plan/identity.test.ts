import { describe, expect, it } from 'vitest';
import { nodeIdentity, targetIdentity } from '../../src/plan/identity.js';
import type { PlanNode, StrategyMode, StrategyNode, TargetNode } from '../../src/plan/types.js';
import type { Target } from '../../src/providers/types.js';

const leaf = (target: Target, override_params?: Record<string, unknown>, path = 'config'): TargetNode => ({
  kind: 'target',
  path,
  id: path,
  weight: 1,
  declares: [],
  target: { ...target },
  settings: override_params ? { override_params: structuredClone(override_params) } : {},
});

const group = (kind: StrategyMode, children: PlanNode[], path = 'config'): StrategyNode => ({ kind, path, weight: 1, settings: {}, declares: [], children });

const KEY = 'sk-fake-0123456789abcdefSECRET';

describe('targetIdentity', () => {
  it('never contains the api key, nor a recognisable part of it', () => {
    const id = targetIdentity(leaf({ provider: 'openai', api_key: KEY }));
    expect(id).not.toContain(KEY);
    expect(id).not.toContain('SECRET');
    expect(id).not.toContain('0123456789abcdef');
    expect(id.startsWith('openai|')).toBe(true);
  });

  it('is equal for equal targets (separate objects)', () => {
    expect(targetIdentity(leaf({ provider: 'openai', api_key: KEY }))).toBe(targetIdentity(leaf({ provider: 'openai', api_key: KEY })));
  });

  it('differs by key, by provider, by host, and with or without a key', () => {
    const base = targetIdentity(leaf({ provider: 'openai', api_key: KEY }));
    const others = [
      targetIdentity(leaf({ provider: 'openai', api_key: `${KEY}2` })),
      targetIdentity(leaf({ provider: 'groq', api_key: KEY })),
      targetIdentity(leaf({ provider: 'openai', api_key: KEY, custom_host: 'https://proxy.example.com/v1' })),
      targetIdentity(leaf({ provider: 'openai' })),
    ];
    for (const o of others) expect(o).not.toBe(base);
    expect(new Set(others).size).toBe(others.length);
    expect(targetIdentity(leaf({ provider: 'ollama', custom_host: 'http://a.example.com' }))).not.toBe(
      targetIdentity(leaf({ provider: 'ollama', custom_host: 'http://b.example.com' })),
    );
  });
});

describe('nodeIdentity', () => {
  const a = () => leaf({ provider: 'openai', api_key: 'sk-fake-a' }, { temperature: 0 }, 'config.targets[0]');
  const b = () => leaf({ provider: 'anthropic', api_key: 'sk-fake-b' }, undefined, 'config.targets[1]');

  it('is stable for equal trees built separately', () => {
    expect(nodeIdentity(group('fallback', [a(), b()]))).toBe(nodeIdentity(group('fallback', [a(), b()])));
    expect(nodeIdentity(a())).toBe(nodeIdentity(a()));
  });

  it('does not depend on sibling order', () => {
    expect(nodeIdentity(group('loadbalance', [a(), b()]))).toBe(nodeIdentity(group('loadbalance', [b(), a()])));
    expect(nodeIdentity(group('fallback', [group('loadbalance', [a(), b()]), a()]))).toBe(
      nodeIdentity(group('fallback', [a(), group('loadbalance', [b(), a()])])),
    );
  });

  it('does not depend on the key order of override_params', () => {
    const x = leaf({ provider: 'openai', api_key: 'k' }, { temperature: 0, max_tokens: 5 });
    const y = leaf({ provider: 'openai', api_key: 'k' }, { max_tokens: 5, temperature: 0 });
    expect(nodeIdentity(x)).toBe(nodeIdentity(y));
  });

  it('differs when an override_params value differs, is added or removed', () => {
    const base = nodeIdentity(group('fallback', [a(), b()]));
    const changed = leaf({ provider: 'openai', api_key: 'sk-fake-a' }, { temperature: 1 });
    const added = leaf({ provider: 'openai', api_key: 'sk-fake-a' }, { temperature: 0, top_p: 0.5 });
    const removed = leaf({ provider: 'openai', api_key: 'sk-fake-a' });
    for (const n of [changed, added, removed]) expect(nodeIdentity(group('fallback', [n, b()]))).not.toBe(base);
  });

  it('differs when a target below changes (key, provider) or one is added', () => {
    const base = nodeIdentity(group('fallback', [a(), b()]));
    expect(nodeIdentity(group('fallback', [a(), leaf({ provider: 'anthropic', api_key: 'sk-fake-c' })]))).not.toBe(base);
    expect(nodeIdentity(group('fallback', [a(), leaf({ provider: 'groq', api_key: 'sk-fake-b' })]))).not.toBe(base);
    expect(nodeIdentity(group('fallback', [a(), b(), a()]))).not.toBe(base);
    expect(nodeIdentity(group('fallback', [a()]))).not.toBe(base);
  });

  it('never contains an api key', () => {
    const id = nodeIdentity(group('fallback', [leaf({ provider: 'openai', api_key: KEY }), b()]));
    expect(id).not.toContain(KEY);
    expect(id).toMatch(/^[\w-]{32}$/); // a base64url digest
  });
});
