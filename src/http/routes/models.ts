import type { Router } from 'express';
import type { AppDeps } from '../app.js';
import { proxyRoute } from './proxy.js';

/** GET /v1/models */
export function mount(router: Router, deps: AppDeps): void {
  router.get('/models', proxyRoute('models', deps));
}
