import { describe, expect, it } from 'vitest';
import { BootstrapError, parseBootstrap } from '../../src/config/bootstrap.js';
import { declaredPromptId, PromptBodySchema } from '../../src/config/prompts.js';
import { declaredId } from '../../src/config/usage-limits.js';
import { thrownBy } from '../helpers/throws.js';

const entry = (extra = '') => `
prompts:
  - name: Greeter
    workspace_id: ws-a
    messages:
      - { role: system, content: "Greet {{who}}." }${extra}
`;

const issues = (body: unknown) => {
  const r = PromptBodySchema.safeParse(body);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('prompt template bodies', () => {
  it('a template with messages, a prompt or both; parameters default to {}', () => {
    expect(PromptBodySchema.parse({ name: 'p', prompt: 'Hi {{x}}' })).toEqual({ name: 'p', prompt: 'Hi {{x}}', parameters: {} });
    expect(issues({ name: 'p', prompt: 'x', messages: [{ role: 'user', content: 'y' }], model: 'm', parameters: { n: 2 } })).toEqual([]);
    expect(issues({ name: 'p', model: 'm' })).toEqual(['messages: a template has messages (chat completions), a prompt (completions), or both']);
  });

  it('parameters are validated as the body of each endpoint the template serves', () => {
    // logprobs is a boolean in chat, a number of tokens in completions
    expect(issues({ name: 'p', messages: [{ role: 'user', content: 'x' }], parameters: { logprobs: true } })).toEqual([]);
    expect(issues({ name: 'p', prompt: 'x', parameters: { logprobs: true } })).toEqual(['parameters.logprobs: Invalid input: expected number, received boolean']);
    expect(issues({ name: 'p', prompt: 'x', parameters: { stop: ['a', 'b', 'c', 'd', 'e'] } })).toHaveLength(1);
    // fields the gateway does not know pass, as they would in a request
    expect(issues({ name: 'p', prompt: 'x', parameters: { vendor_flag: { a: 1 } } })).toEqual([]);
    expect(issues({ name: 'p', prompt: 'x', parameters: { variables: {}, stream_options: {} } })).toEqual([
      'parameters.variables: not a parameter: variables come with each request',
      'parameters.stream_options: not a parameter: each request chooses whether it streams',
    ]);
  });
});

describe('bootstrap prompts', () => {
  it('parses entries with the API body\'s schema', () => {
    expect(parseBootstrap(entry(), {}).prompts).toEqual([{ name: 'Greeter', workspace_id: 'ws-a', messages: [{ role: 'system', content: 'Greet {{who}}.' }], parameters: {} }]);
    expect(parseBootstrap('api_keys: []', {}).prompts).toBeUndefined();
  });

  it('names the bad path: a template that does not parse, a missing scope, the same prompt twice', () => {
    const msg = (yaml: string) => thrownBy(BootstrapError, () => parseBootstrap(yaml, {})).message;
    expect(msg(entry().replace('{{who}}', '{{who}'))).toMatch(/prompts\[0\]\.messages\[0\]\.content: not a valid template: Unclosed tag/);
    expect(msg(entry('\n    parameters: { temperature: 9 }'))).toMatch(/prompts\[0\]\.parameters\.temperature/);
    expect(msg(entry().replace('    workspace_id: ws-a\n', ''))).toMatch(/prompts\[0\]\.workspace_id: a prompt names its workspace_id or organisation_id/);
    expect(msg(`${entry()}  - { name: Greeter, workspace_id: ws-a, prompt: x }\n`)).toMatch(/prompts\[1\]: the same prompt as prompts\[0\]/);
  });

  it('declaredPromptId: the given id, else stable per scope and name, and never a policy\'s', () => {
    const a = declaredPromptId({ name: 'Greeter', workspace_id: 'ws-a' });
    expect(declaredPromptId({ name: 'Greeter', workspace_id: 'ws-a' })).toBe(a);
    expect(declaredPromptId({ name: 'Greeter', workspace_id: 'ws-b' })).not.toBe(a);
    expect(declaredId({ name: 'Greeter', workspace_id: 'ws-a' })).not.toBe(a);
    expect(declaredPromptId({ id: '0B6C7D2E-3F41-4A5B-8C6D-7E8F9A0B1C2D', name: 'x' })).toBe('0b6c7d2e-3f41-4a5b-8c6d-7e8f9a0b1c2d');
  });
});
