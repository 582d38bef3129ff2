import type express from 'express';
import type { PromptsService } from '../../management/prompts.js';
import { resourceRoutes } from './resource.js';

/** The prompts API (docs/prompts.md): `/v1/prompts` and `/v1/prompts/{id or slug}`. */
export function promptRoutes(service: PromptsService, bodyLimitBytes: number): express.Router {
  return resourceRoutes('/v1/prompts', service, bodyLimitBytes);
}
