import type express from 'express';
import type { VirtualKeysService } from '../../management/virtual-keys.js';
import { resourceRoutes } from './resource.js';

/** The virtual keys API (docs/workspaces-and-keys.md, "Virtual keys API"): `/v1/virtual-keys` and `/v1/virtual-keys/{id}`. */
export function virtualKeyRoutes(service: VirtualKeysService, bodyLimitBytes: number): express.Router {
  return resourceRoutes('/v1/virtual-keys', service, bodyLimitBytes);
}
