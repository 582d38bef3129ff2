import { describe, expect, it } from 'vitest';
import { resolveCheck, runCheck } from '../../src/checks/registry.js';
import { MAX_REGEX_INPUT } from '../../src/util/bounded-regex.js';
import { chatResponse, deps, expectInvalid, run, verdict } from './_helpers.js';

const schema = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 }, email: { type: 'string', format: 'email' } },
  required: ['name'],
  additionalProperties: false,
};

describe('jsonSchema', () => {
  it('passes valid JSON, fails invalid with each failing path and rule (never the values)', async () => {
    expect(await verdict('jsonSchema', { schema }, chatResponse('{"name":"Ada","age":36}'))).toBe(true);
    const out = await run('jsonSchema', { schema }, chatResponse('{"age":-1,"email":"not-an-email","extra":"SECRETVALUE"}'));
    expect(out.verdict).toBe(false);
    const errors = (out.data as { errors: { path: string; keyword: string }[] }).errors;
    expect(errors.map((e) => `${e.path}:${e.keyword}`).sort()).toEqual(['/age:minimum', '/email:format', ':additionalProperties', ':required'].sort());
    expect(JSON.stringify(out.data)).not.toContain('SECRETVALUE');
  });

  it('finds JSON in a ```json block or between braces; no JSON fails', async () => {
    expect(await verdict('jsonSchema', { schema }, chatResponse('Here:\n```json\n{"name":"x"}\n```\nDone.'))).toBe(true);
    expect(await verdict('jsonSchema', { schema }, chatResponse('Sure! {"name":"x"} hope it helps'))).toBe(true);
    expect(await run('jsonSchema', { schema }, chatResponse('no json here'))).toMatchObject({ verdict: false, data: { explanation: 'no JSON found in the text' } });
  });

  it('not inverts', async () => {
    expect(await verdict('jsonSchema', { schema, not: true }, chatResponse('{"name":1}'))).toBe(true);
  });

  it('one resolved check answers many requests (the validator is kept with its parameters)', async () => {
    const r = resolveCheck('jsonSchema', { schema }, 'p');
    const s = new AbortController().signal;
    expect((await runCheck(r, chatResponse('{"name":"a"}'), deps(), s)).verdict).toBe(true);
    expect((await runCheck(r, chatResponse('{"name":2}'), deps(), s)).verdict).toBe(false);
    expect((await runCheck(r, chatResponse('{"name":"b"}'), deps(), s)).verdict).toBe(true);
  });

  it('schema patterns are bounded like every config regex', async () => {
    const p = { schema: { type: 'object', properties: { code: { type: 'string', pattern: '^[A-Z]+$' } } } };
    expect(await verdict('jsonSchema', p, chatResponse('{"code":"ABC"}'))).toBe(true);
    expect(await verdict('jsonSchema', p, chatResponse('{"code":"abc"}'))).toBe(false);
    expect(await verdict('jsonSchema', p, chatResponse(JSON.stringify({ code: 'A'.repeat(MAX_REGEX_INPUT + 1) })))).toBe(false);
    expectInvalid('jsonSchema', { schema: { type: 'string', pattern: 'a'.repeat(257) } }, 'schema', /at most 256 characters/);
  });

  it('refuses a missing or invalid schema, and unknown keywords, at config time', () => {
    expectInvalid('jsonSchema', {}, 'schema');
    expectInvalid('jsonSchema', { schema: { type: 'nonsense' } }, 'schema', /not a valid JSON Schema/);
    expectInvalid('jsonSchema', { schema: { type: 'object', requird: ['a'] } }, 'schema', /unknown keyword/);
  });
});
