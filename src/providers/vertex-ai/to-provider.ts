import { forwardedHeaders } from '../forward-headers.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ProviderRequest, Target, UpstreamRequest } from '../types.js';
import { GCP_REGION } from '../../config/host-parts.js';
import { withRegion } from '../hosts.js';
import { VERTEX_AI, VERTEX_BASE_URL } from './descriptor.js';
import { bad, type Json } from './gemini-messages.js';
import { toGeminiRequest } from './gemini-request.js';
import { toVertexClaude, VERTEX_CLAUDE_MODEL } from './claude.js';

/** The default host of a region (global and the multi-regions have their own). */
export function regionalBase(region: string): string {
  if (region === 'global') return 'https://aiplatform.googleapis.com';
  if (region === 'us' || region === 'eu') return `https://aiplatform.${region}.rep.googleapis.com`;
  return `https://${region}-aiplatform.googleapis.com`;
}

/**
 * origin and path prefix per (base URL, region): parsed once (base URLs and regions are few). The
 * region is a Google Cloud location name (else a 400 naming cloud_c_region) and is put into the
 * host with the URL API (src/providers/hosts.ts).
 */
const hosts = new Map<string, { origin: string; prefix: string }>();
function hostOf(baseUrl: string, region: string, custom: boolean): { origin: string; prefix: string } {
  const key = `${custom ? 'c' : 'd'}\u0000${baseUrl}\u0000${region}`;
  let hit = hosts.get(key);
  if (hit) return hit;
  const base = baseUrl === VERTEX_BASE_URL && !custom && GCP_REGION.test(region) ? regionalBase(region) : baseUrl;
  const u = withRegion(base, region, 'cloud_c_region', GCP_REGION, 'us-central1, global, us or eu');
  hit = { origin: u.origin, prefix: u.pathname.replace(/\/+$/, '') };
  if (hosts.size > 1000) hosts.clear();
  hosts.set(key, hit);
  return hit;
}
/** The client headers forward_headers names (x-goog-user-project, say), never Google's API key. */
const forwarded = (req: ProviderRequest): Record<string, string> => forwardedHeaders(req, (h) => h === 'x-goog-api-key');

function extraString(target: Target, field: string): string | undefined {
  const v = target.extra?.[field];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The OpenAI-shaped request (or a Messages request for Claude, claude.ts) → a Vertex request (the token, if any, is added by `prepare`). Pure. */
export function toVertex(req: ProviderRequest, target: Target, baseUrl: string): UpstreamRequest {
  if (req.endpoint !== 'chat' && req.endpoint !== 'models' && req.endpoint !== 'messages') {
    throw new GatewayError('unsupported_endpoint', `Provider vertex-ai does not serve ${req.endpoint} (only chat completions, Claude's messages and models).`);
  }
  const region = extraString(target, 'cloud_c_region');
  if (region === undefined) {
    throw new GatewayError('invalid_config', 'vertex-ai needs cloud_c_region: a region such as us-central1, global, us or eu.', { param: 'cloud_c_region' });
  }
  const { origin, prefix } = hostOf(baseUrl, region, target.custom_host !== undefined);
  const headers = forwarded(req);
  const sa = target.extra?.cloud_c_service_account_json as Json | undefined;
  if (!sa) {
    if (target.api_key === undefined) {
      throw new GatewayError('missing_provider_credential', 'vertex-ai needs an access token (Authorization: Bearer) or cloud_c_service_account_json.', {
        param: 'authorization',
      });
    }
    headers.authorization = `Bearer ${target.api_key}`;
  }
  if (req.endpoint === 'models') return { origin, path: prefix + VERTEX_AI.paths.models!, method: 'GET', headers, stream: false };

  const project = extraString(target, 'cloud_c_project_id') ?? (typeof sa?.project_id === 'string' ? sa.project_id : undefined);
  if (project === undefined) {
    throw new GatewayError('invalid_config', 'vertex-ai needs cloud_c_project_id (or a service account with project_id).', { param: 'cloud_c_project_id' });
  }
  const base = `${prefix}/v1/projects/${encodeURIComponent(project)}/locations/${region}`;
  headers['content-type'] = 'application/json';
  if (req.stream) headers.accept = 'text/event-stream';
  if (req.endpoint === 'messages') {
    // Reached only for a Claude model (the descriptor's nativeModels), or when no bridge serves the rest.
    if (!VERTEX_CLAUDE_MODEL.test(String(req.body?.model ?? ''))) {
      throw new GatewayError('unsupported_endpoint', 'Provider vertex-ai serves /v1/messages itself for Claude models only.', { param: 'model' });
    }
    const claude = toVertexClaude(req);
    if (claude.beta !== undefined) headers['anthropic-beta'] = claude.beta;
    return { origin, method: 'POST', path: base + claude.path, headers, body: claude.body, stream: req.stream };
  }
  const body = req.body!;
  const model = typeof body.model === 'string' ? body.model.replace(/^(?:google\/|publishers\/google\/models\/)/, '') : '';
  if (model === '') throw bad('model', 'model must name a Gemini model, e.g. gemini-2.5-flash.');
  const method = req.stream ? ':streamGenerateContent?alt=sse' : VERTEX_AI.paths.chat!;
  return {
    origin,
    method: 'POST',
    path: `${base}/publishers/google/models/${encodeURIComponent(model)}${method}`,
    headers,
    body: JSON.stringify(toGeminiRequest(body)),
    stream: req.stream,
  };
}
