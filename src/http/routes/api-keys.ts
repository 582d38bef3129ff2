import type express from 'express';
import type { ApiKeysService } from '../../management/api-keys.js';
import { resourceRoutes } from './resource.js';

/** The admin API for gateway keys (docs/workspaces-and-keys.md): `/v1/api-keys` and `/v1/api-keys/{id}`. */
export function apiKeyRoutes(service: ApiKeysService, bodyLimitBytes: number): express.Router {
  return resourceRoutes('/v1/api-keys', service, bodyLimitBytes);
}
