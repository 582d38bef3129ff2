import type express from 'express';
import type { GuardrailsService } from '../../management/guardrails.js';
import { resourceRoutes } from './resource.js';

/** The guardrails API (docs/guardrails.md, "Guardrails API"): `/v1/guardrails` and `/v1/guardrails/{id or slug}`. */
export function guardrailRoutes(service: GuardrailsService, bodyLimitBytes: number): express.Router {
  return resourceRoutes('/v1/guardrails', service, bodyLimitBytes);
}
