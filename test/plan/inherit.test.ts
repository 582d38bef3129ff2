import { describe, expect, it } from 'vitest';
import { REPLACED_WHOLE, inherit } from '../../src/plan/inherit.js';
import type { NodeSettings } from '../../src/plan/types.js';

type Field = (typeof REPLACED_WHOLE)[number];

/** For each field replaced whole: a parent value and a child value that differ in shape. */
const TABLE: Record<Field, { parent: unknown; child: unknown }> = {
  retry: { parent: { attempts: 3, on_status_codes: [429, 500], use_retry_after_headers: true }, child: { attempts: 1 } },
  cache: { parent: { mode: 'semantic', max_age: 60 }, child: { mode: 'simple' } },
  request_timeout: { parent: 10_000, child: 2_000 },
  cb_config: { parent: { failure_threshold: 5, cooldown_interval: 60_000, failure_status_codes: [500] }, child: { failure_threshold: 2, cooldown_interval: 30_000 } },
  custom_host: { parent: 'https://parent.example/v1', child: 'https://child.example/v1' },
  forward_headers: { parent: ['x-a', 'x-b'], child: ['x-c'] },
  before_request_hooks: { parent: [{ id: 'p-before' }, { id: 'p-before-2' }], child: [{ id: 'c-before' }] },
  after_request_hooks: { parent: [{ id: 'p-after', async: true }], child: [{ id: 'c-after' }] },
  input_guardrails: { parent: ['pg-in-1', 'pg-in-2'], child: ['pg-in-3'] },
  output_guardrails: { parent: [{ id: 'pg-out', deny: true }], child: ['pg-out-2'] },
  strict_vendor_compliance: { parent: true, child: false },
};

describe('inherit', () => {
  it('has a table row for every REPLACED_WHOLE field and no other', () => {
    expect(Object.keys(TABLE).sort()).toEqual([...REPLACED_WHOLE].sort());
  });

  describe.each(Object.entries(TABLE) as [Field, { parent: unknown; child: unknown }][])('%s', (field, { parent, child }) => {
    it('is inherited when the child lacks it', () => {
      const out = inherit({ [field]: parent } as NodeSettings, {});
      expect(out[field]).toEqual(parent);
      // the same value, not a copy: settings are read-only data
      expect(out[field]).toBe(parent);
    });

    it('is replaced whole when the child has it (no merge)', () => {
      const out = inherit({ [field]: parent } as NodeSettings, { [field]: child });
      expect(out[field]).toEqual(child);
      expect(out[field]).toBe(child);
    });

    it('is taken from the child when the parent lacks it', () => {
      expect(inherit({}, { [field]: child })[field]).toEqual(child);
    });

    it('is absent when neither sets it', () => {
      expect(inherit({}, {})).not.toHaveProperty(field);
    });
  });

  it('keeps a falsy child value rather than falling back to the parent', () => {
    expect(inherit({ strict_vendor_compliance: true }, { strict_vendor_compliance: false }).strict_vendor_compliance).toBe(false);
    expect(inherit({ forward_headers: ['x-a'] }, { forward_headers: [] }).forward_headers).toEqual([]);
  });

  it('merges override_params per key, the child winning', () => {
    const parent = { override_params: { temperature: 0.2, max_tokens: 100, user: 'parent' } };
    const out = inherit(parent, { override_params: { temperature: 0.9, seed: 7 } });
    expect(out.override_params).toEqual({ temperature: 0.9, max_tokens: 100, user: 'parent', seed: 7 });
    // the parent's object is left alone
    expect(parent.override_params).toEqual({ temperature: 0.2, max_tokens: 100, user: 'parent' });
  });

  it('merges override_params one level deep only (a nested object is replaced)', () => {
    const out = inherit(
      { override_params: { response_format: { type: 'json_schema', json_schema: { name: 'a' } } } },
      { override_params: { response_format: { type: 'text' } } },
    );
    expect(out.override_params).toEqual({ response_format: { type: 'text' } });
  });

  it('takes override_params from whichever side has them', () => {
    expect(inherit({ override_params: { a: 1 } }, {}).override_params).toEqual({ a: 1 });
    expect(inherit({}, { override_params: { b: 2 } }).override_params).toEqual({ b: 2 });
    expect(inherit({}, {})).not.toHaveProperty('override_params');
  });

  it('flows through several levels', () => {
    const root = inherit({}, { retry: { attempts: 2 }, override_params: { a: 1 }, request_timeout: 5000 });
    const mid = inherit(root, { override_params: { b: 2 }, request_timeout: 1000 });
    const leaf = inherit(mid, { override_params: { a: 3 } });
    expect(leaf).toEqual({ retry: { attempts: 2 }, request_timeout: 1000, override_params: { a: 3, b: 2 } });
  });

  it.each(['api_key', 'virtual_key', 'provider', 'weight', 'name', 'strategy', 'targets', 'vendor_organization', 'cloud_b_secret_access_key'])(
    'never inherits or copies %s',
    (field) => {
      const parent = { [field]: 'parent-value', retry: { attempts: 1 } } as unknown as NodeSettings;
      const out = inherit(parent, { [field]: 'child-value' } as never);
      expect(out).not.toHaveProperty(field);
      expect(out).toEqual({ retry: { attempts: 1 } });
    },
  );

  it('ignores own fields set to undefined (the parent value stays)', () => {
    expect(inherit({ request_timeout: 3000 }, { request_timeout: undefined }).request_timeout).toBe(3000);
  });
});
