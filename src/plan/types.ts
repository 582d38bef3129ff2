import type { Target } from '../providers/types.js';
import type { Config } from '../config/schema.js';

/** Settings a node carries after inheritance. */
export interface NodeSettings {
  override_params?: Record<string, unknown>;
  retry?: Config['retry'];
  cache?: Config['cache'];
  request_timeout?: number;
  cb_config?: Config['cb_config'];
  custom_host?: string;
  forward_headers?: string[];
  before_request_hooks?: Config['before_request_hooks'];
  after_request_hooks?: Config['after_request_hooks'];
  input_guardrails?: Config['input_guardrails'];
  output_guardrails?: Config['output_guardrails'];
  strict_vendor_compliance?: boolean;
}

/** The settings that are stages of a request: a node declares one when its own config level sets it. */
export const STAGE_SETTINGS = ['cache', 'input_guardrails', 'before_request_hooks', 'output_guardrails', 'after_request_hooks'] as const;
export type StageSetting = (typeof STAGE_SETTINGS)[number];

/**
 * The prompt template a request renders (`prompt_id` at the config's root): an id or slug, and the
 * version pinned with `<id or slug>@<version_id>` (else the latest). Looked up per request, in the
 * scope of the request's gateway key.
 */
export interface PromptRef {
  ref: string;
  version_id?: string;
  /** Where the config set it, for errors: `config.prompt_id`. */
  param: string;
}

interface NodeBase {
  /** JSON path of the node in the config, e.g. `config.targets[1].targets[0]`. */
  path: string;
  /** The root only: the prompt template rendered into each request before it is routed. */
  prompt?: PromptRef;
  name?: string;
  weight: number;
  settings: NodeSettings;
  /**
   * The stage settings this node's own config level declares (not inherited): the pipeline wraps
   * this node in those stages, and its children inherit the settings without wrapping again.
   */
  declares: readonly StageSetting[];
}

export interface TargetNode extends NodeBase {
  kind: 'target';
  target: Target;
  /** Stable label for metrics and breaker state: the name, else the path. */
  id: string;
}

export type StrategyMode = 'single' | 'loadbalance' | 'fallback' | 'conditional' | 'race';

export interface StrategyNode extends NodeBase {
  kind: StrategyMode;
  children: PlanNode[];
  on_status_codes?: number[];
  conditions?: { query: Record<string, unknown>; then: string }[];
  default?: string;
  hedge_after_ms?: number;
  /** A loadbalance picking by latency, not weighted random (src/state/latency-board.ts). */
  algorithm?: 'least_latency';
}

export type PlanNode = TargetNode | StrategyNode;
