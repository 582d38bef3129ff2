import type { NodeSettings } from './types.js';

/** Fields a child takes from its parent when it does not set them itself (replaced whole). */
export const REPLACED_WHOLE = [
  'retry',
  'cache',
  'request_timeout',
  'cb_config',
  'custom_host',
  'forward_headers',
  'before_request_hooks',
  'after_request_hooks',
  'input_guardrails',
  'output_guardrails',
  'strict_vendor_compliance',
] as const satisfies readonly (keyof NodeSettings)[];

/**
 * Parent settings + a child's own config fields → the child's settings. `override_params` merge per
 * key (child wins); the REPLACED_WHOLE fields come from the child when it sets them, else from the
 * parent. Credentials, weight, name and strategy are not settings and are never inherited.
 */
export function inherit(parent: NodeSettings, own: Partial<Record<keyof NodeSettings, unknown>>): NodeSettings {
  const out: NodeSettings = {};
  for (const k of REPLACED_WHOLE) {
    const v = own[k] !== undefined ? own[k] : parent[k];
    if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  }
  const po = parent.override_params;
  const co = own.override_params as Record<string, unknown> | undefined;
  if (po || co) out.override_params = po && co ? { ...po, ...co } : (co ?? po);
  return out;
}
