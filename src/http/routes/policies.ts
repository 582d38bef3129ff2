import type express from 'express';
import type { PoliciesService } from '../../management/policies.js';
import { resourceRoutes } from './resource.js';

/** The usage-limits API (docs/usage-limits.md): `/v1/policies/usage-limits` and `.../{id}`. */
export function policyRoutes(service: PoliciesService, bodyLimitBytes: number): express.Router {
  return resourceRoutes('/v1/policies/usage-limits', service, bodyLimitBytes);
}
