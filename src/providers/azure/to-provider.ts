import { AZURE_ENDPOINT_HOST } from '../../config/host-parts.js';
import { forwardedHeaders } from '../forward-headers.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { jsonUpstream, withStreamUsage } from '../openai-compatible/to-provider.js';
import type { ProviderDescriptor, ProviderRequest, Target, UpstreamRequest } from '../types.js';
import { AZURE_AI_DEFAULT_BASE, AZURE_DEFAULT_API_VERSION, AZURE_OPENAI_DEFAULT_BASE } from './descriptors.js';

interface Deployment {
  deployment_id: string;
  alias: string;
  api_version: string;
  is_default?: boolean;
}

/** A DNS label (Azure resource, endpoint and region names): nothing that could change the host. */
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
/** A JWT (an Entra ID access token): three base64url parts. Azure API keys have no dots. */
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Credentials and routing headers the gateway sets itself: never taken from forward_headers. */
const OWN_HEADERS = new Set(['api-key', 'azureml-model-deployment']);

function str(target: Target, field: string): string | undefined {
  const v = target.extra?.[field];
  return typeof v === 'string' ? v : undefined;
}

function needs(field: string, why: string): GatewayError {
  return new GatewayError('invalid_config', `${field} is required ${why}.`, { param: field });
}

function label(target: Target, field: string, why: string): string {
  const v = str(target, field);
  if (v === undefined) throw needs(field, why);
  if (!LABEL.test(v)) {
    throw new GatewayError('invalid_config', `${field} must be a DNS label (letters, digits and -), got "${v}".`, { param: field });
  }
  return v;
}

function forwarded(req: ProviderRequest, headers: Record<string, string>): void {
  forwardedHeaders(req, (h) => OWN_HEADERS.has(h), headers);
}

function pathOf(descriptor: ProviderDescriptor, req: ProviderRequest): string {
  const path = descriptor.paths[req.endpoint];
  if (!path) throw new GatewayError('unsupported_endpoint', `Provider ${descriptor.id} does not serve ${req.endpoint}.`);
  return path;
}

/**
 * The deployment a request goes to: the `deployments` entry whose alias is the body's `model`, else
 * the one marked `is_default`, else `deployment_id` (with `api_version`). None: a 400 naming `model`.
 */
export function pickDeployment(req: ProviderRequest, target: Target): { id: string; apiVersion: string } {
  const list = target.extra?.deployments as readonly Deployment[] | undefined;
  if (list && list.length > 0) {
    const model = req.body?.model;
    const hit = list.find((d) => d.alias === model) ?? list.find((d) => d.is_default === true);
    if (hit) return { id: hit.deployment_id, apiVersion: hit.api_version };
  }
  const id = str(target, 'deployment_id');
  if (id !== undefined) return { id, apiVersion: str(target, 'api_version') ?? AZURE_DEFAULT_API_VERSION };
  if (list && list.length > 0) {
    const aliases = list.map((d) => d.alias).join(', ');
    throw new GatewayError(
      'invalid_request_body',
      `model ${JSON.stringify(req.body?.model ?? null)} names no deployment of this azure-openai target and none is is_default; aliases: ${aliases}.`,
      { param: 'model' },
    );
  }
  throw needs('deployment_id', 'for azure-openai (or deployments with an alias per deployment)');
}

/** stream_options (include_usage) exists from api-version 2024-09-01-preview and GA 2024-10-21. */
const streamUsageSupported = (apiVersion: string): boolean => apiVersion >= '2024-09-01';

/** Azure OpenAI: the deployment path, the api-version query, `api-key` or an Entra ID bearer token. Pure. */
export function toAzureOpenAI(descriptor: ProviderDescriptor, req: ProviderRequest, target: Target, baseUrl: string): UpstreamRequest {
  const path = pathOf(descriptor, req);
  const base =
    baseUrl === AZURE_OPENAI_DEFAULT_BASE
      ? `https://${label(target, 'resource_name', 'for azure-openai without custom_host')}.openai.azure.com/openai`
      : baseUrl;
  const headers: Record<string, string> = {};
  forwarded(req, headers);
  const key = target.api_key;
  if (key !== undefined) {
    if (JWT.test(key)) headers.authorization = `Bearer ${key}`;
    else headers['api-key'] = key;
  }
  if (req.endpoint === 'models') {
    const v = str(target, 'api_version') ?? AZURE_DEFAULT_API_VERSION;
    return jsonUpstream(base, `${path}?api-version=${encodeURIComponent(v)}`, req, target, headers, undefined);
  }
  const d = pickDeployment(req, target);
  let body = req.body;
  if (body && req.stream && streamUsageSupported(d.apiVersion)) body = withStreamUsage(body);
  const pq = `/deployments/${encodeURIComponent(d.id)}${path}?api-version=${encodeURIComponent(d.apiVersion)}`;
  return jsonUpstream(base, pq, req, target, headers, body);
}

/**
 * The default base of an AI Foundry endpoint:
 * serverless `https://{cloud_a_endpoint_name | cloud_a_deployment_name}.{cloud_a_region}.models.ai.azure.com`,
 * managed `https://{cloud_a_endpoint_name}.{cloud_a_region}.inference.ml.azure.com/v1`;
 * an endpoint name that is a whole host name (has dots) is that host, with no region.
 */
export function azureAIBase(target: Target): string {
  const type = str(target, 'cloud_a_deployment_type');
  if (type === undefined) throw needs('cloud_a_deployment_type', '(serverless or managed) for azure-ai without custom_host');
  const managed = type === 'managed';
  const endpoint = str(target, 'cloud_a_endpoint_name');
  if (endpoint !== undefined && endpoint.includes('.')) {
    // A whole host only under Azure's inference domains: any other host is a custom_host.
    if (!AZURE_ENDPOINT_HOST.test(endpoint)) {
      throw new GatewayError('invalid_config', `cloud_a_endpoint_name must be a DNS label or an endpoint host under inference.ml.azure.com, models.ai.azure.com or services.ai.azure.com, got "${endpoint}".`, {
        param: 'cloud_a_endpoint_name',
      });
    }
    return managed ? `https://${endpoint}/v1` : `https://${endpoint}`;
  }
  const name = managed || endpoint !== undefined
    ? label(target, 'cloud_a_endpoint_name', 'for a managed azure-ai endpoint')
    : label(target, 'cloud_a_deployment_name', 'for a serverless azure-ai endpoint (or cloud_a_endpoint_name)');
  const region = label(target, 'cloud_a_region', `for azure-ai ${type} endpoints (or a whole host name in cloud_a_endpoint_name)`);
  return managed ? `https://${name}.${region}.inference.ml.azure.com/v1` : `https://${name}.${region}.models.ai.azure.com`;
}

/** Azure AI Foundry: `{base}{path}[?api-version=…]`, Bearer key, `azureml-model-deployment` on managed endpoints. Pure. */
export function toAzureAI(descriptor: ProviderDescriptor, req: ProviderRequest, target: Target, baseUrl: string): UpstreamRequest {
  const path = pathOf(descriptor, req);
  const base = baseUrl === AZURE_AI_DEFAULT_BASE ? azureAIBase(target) : baseUrl;
  const headers: Record<string, string> = {};
  forwarded(req, headers);
  if (target.api_key !== undefined) headers.authorization = `Bearer ${target.api_key}`;
  const deployment = str(target, 'cloud_a_deployment_name');
  if (deployment !== undefined && str(target, 'cloud_a_deployment_type') === 'managed') headers['azureml-model-deployment'] = deployment;
  const v = str(target, 'cloud_a_api_version');
  const pq = v === undefined ? path : `${path}?api-version=${encodeURIComponent(v)}`;
  return jsonUpstream(base, pq, req, target, headers, req.endpoint === 'models' ? undefined : req.body);
}
