import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { PromptRenderer } from '../../src/pipeline/prompt.js';
import type { PromptRef } from '../../src/plan/types.js';
import { MemoryResourceStore } from '../../src/state/memory/resource-store.js';
import { PROMPTS, type PromptContent } from '../../src/state/prompt-store.js';
import type { ResourceScope } from '../../src/state/resource-store.js';
import { thrownBy } from '../helpers/throws.js';

const WS: ResourceScope = { workspace_id: 'ws-a' };
const ref = (r: string, version_id?: string): PromptRef => (version_id ? { ref: r, version_id, param: 'config.prompt_id' } : { ref: r, param: 'config.prompt_id' });

async function setup(content: PromptContent) {
  const store = new MemoryResourceStore(PROMPTS);
  const record = await store.create({ ...content, ...WS });
  // the caller is its scope here (the gateway passes the key and the management APIs' rule)
  const renderer = new PromptRenderer<ResourceScope>((idOrSlug, versionId, scope) => store.lookup(idOrSlug, versionId, scope), (scope) => scope);
  const render = (raw: unknown, endpoint: 'chat' | 'completions' | 'embeddings' = 'chat', scope: ResourceScope = WS) =>
    renderer.render(ref(record.slug), endpoint, raw, scope) as Record<string, any>;
  return { store, record, renderer, render };
}

describe('PromptRenderer', () => {
  it('parses each version once, however many requests render it; a new version is parsed once more', async () => {
    const { store, record, renderer, render } = await setup({ name: 'P', messages: [{ role: 'user', content: 'Hi {{n}}' }], parameters: {} });
    for (let i = 0; i < 5; i++) expect(render({ variables: { n: i } }).messages[0].content).toBe(`Hi ${i}`);
    expect(renderer.versionsParsed).toBe(1);
    await store.update(record.id, WS, { name: 'P', messages: [{ role: 'user', content: 'Hello {{n}}' }], parameters: {} });
    expect(render({ variables: { n: 1 } }).messages[0].content).toBe('Hello 1');
    expect(render({ variables: { n: 2 } }).messages[0].content).toBe('Hello 2');
    expect(renderer.versionsParsed).toBe(2);
  });

  it('renders text parts and leaves other parts and message fields as stored; the stored template is not changed', async () => {
    const image = { type: 'image_url', image_url: { url: 'https://example.com/{{not-a-template}}.png' } };
    const { record, render } = await setup({
      name: 'Parts',
      messages: [{ role: 'user', name: 'agent-{{x}}', content: [{ type: 'text', text: 'Look at {{x}}' }, image] }],
      parameters: {},
    });
    const out = render({ variables: { x: 'this' } });
    expect(out.messages).toEqual([{ role: 'user', name: 'agent-{{x}}', content: [{ type: 'text', text: 'Look at this' }, image] }]);
    expect(record.messages![0]!.content).toEqual([{ type: 'text', text: 'Look at {{x}}' }, image]);
  });

  it('the body: template model and parameters, then the request\'s fields over them, variables dropped', async () => {
    const { render } = await setup({ name: 'P', model: 'm-template', messages: [{ role: 'system', content: 's' }], parameters: { temperature: 0.1, top_p: 0.5, seed: 7 } });
    expect(render({ variables: {}, temperature: 1, user: 'u-1', messages: [{ role: 'user', content: 'q' }] })).toEqual({
      model: 'm-template',
      temperature: 1,
      top_p: 0.5,
      seed: 7,
      user: 'u-1',
      messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'q' }],
    });
    // a body that is not an object, or messages that are not an array, are left for the body's own 400
    expect(render('text')).toBe('text');
    expect(render({ messages: 'x' }).messages).toBe('x');
  });

  it('refuses: another scope\'s prompt (unknown), the wrong kind of template, an endpoint without templates, variables without a prompt', async () => {
    const { renderer, render } = await setup({ name: 'Chat only', messages: [{ role: 'user', content: 'x' }], parameters: {} });
    const err = (fn: () => unknown) => thrownBy(GatewayError, fn);
    expect(err(() => render({}, 'chat', { workspace_id: 'ws-b' }))).toMatchObject({ code: 'invalid_config', param: 'config.prompt_id' });
    expect(err(() => render({}, 'completions')).message).toContain('renders chat completions');
    expect(err(() => render({}, 'embeddings')).message).toContain('not embeddings requests');
    expect(err(() => renderer.render(undefined, 'chat', { variables: {} }, WS))).toMatchObject({ code: 'invalid_request_body', param: 'variables' });
    expect(renderer.render(undefined, 'chat', { model: 'm' }, WS)).toEqual({ model: 'm' });
    expect(renderer.render(undefined, 'models', undefined, WS)).toBeUndefined();
  });

  it('a pinned version renders that version; an unknown version is unknown', async () => {
    const { store, record, renderer } = await setup({ name: 'P', prompt: 'v1 {{x}}', parameters: {} });
    await store.update(record.id, WS, { name: 'P', prompt: 'v2 {{x}}', parameters: {} });
    const out = renderer.render(ref(record.id, record.version_id), 'completions', { variables: { x: 1 } }, WS) as Record<string, unknown>;
    expect(out.prompt).toBe('v1 1');
    expect(thrownBy(GatewayError, () => renderer.render(ref(record.id, 'nope'), 'completions', {}, WS)).message).toContain('version nope');
  });
});
