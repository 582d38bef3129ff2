import type { Router } from 'express';
import type { AppDeps } from '../app.js';
import { proxyRoute } from './proxy.js';

/** POST /v1/completions */
export function mount(router: Router, deps: AppDeps): void {
  router.post('/completions', proxyRoute('completions', deps));
}
