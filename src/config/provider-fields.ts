/**
 * The fields that say how a target reaches its provider, written once: one zod schema per field group,
 * each field marked when it is a secret and with the `x-gateway-*` header that sets it. A provider
 * descriptor (src/providers/) names the groups it accepts; everything else derives from here: the
 * config schema's provider fields and the required-key sets that name them (schema.ts), the virtual
 * keys of the bootstrap file (bootstrap.ts), the header table (headers.ts), the target the plan builds
 * (plan/build-plan.ts), the fields a request may not set beside a virtual key (plan/key-destination.ts),
 * and, through the secret marks of security/redact.ts, the redaction of `sluice plan`, management
 * answers, error messages and logs.
 *
 * This sits in config/ (below providers/) so that both the config schemas and the descriptors reach it.
 */
import { z } from 'zod';
import { declareSecretFields, REDACTED, secret, secretKindOf } from '../security/redact.js';
import { AWS_REGION, AZURE_ENDPOINT_HOST, AZURE_REGION, CustomHost, DNS_LABEL, dnsLabel, GCP_REGION } from './host-parts.js';

/** What a provider field says about itself. */
export interface FieldMeta {
  /** The loose request header that sets the field (a trimmed, non-empty string). */
  header?: string;
  /**
   * The field says where the request, and so the credential on it, goes: the host, the path, the
   * account or project the credential acts in, or (a service account) the token endpoint its signed
   * assertion is sent to. A request that uses a virtual key may not set such a field unless the key
   * allows it (plan/key-destination.ts).
   */
  destination?: true;
}

/** The marks, keyed by field schema (each field has its own schema instance). */
export const fieldMeta = z.registry<FieldMeta>();

/**
 * A provider field; `secret`: a credential, marked on its schema (security/redact.ts), so it is never
 * printed by `sluice plan`, answered by the management APIs, logged, or echoed in an error.
 */
function field<T extends z.ZodType>(schema: T, meta: FieldMeta & { secret?: true } = {}): T {
  const { secret: isSecret, ...rest } = meta;
  fieldMeta.add(schema, rest);
  return isSecret ? secret(schema) : schema;
}

export const DeploymentSchema = z.strictObject({
  deployment_id: z.string(),
  alias: z.string(),
  api_version: z.string(),
  is_default: z.boolean().optional(),
});

interface FieldGroup<F extends Record<string, z.ZodType>> {
  fields: F;
  /**
   * The required-key sets made of this group's fields: each, together with `provider`, is
   * enough for a config to name a usable target.
   */
  keySets?: readonly (readonly (keyof F & string)[])[];
}
const group = <F extends Record<string, z.ZodType>>(g: FieldGroup<F>): FieldGroup<F> => g;

/** Every field group, by name. Descriptors list the names of the groups they accept. */
export const FIELD_GROUPS = {
  /** The provider's own key (from config, a virtual key, or `Authorization`). */
  api_key: group({
    fields: { api_key: field(z.string(), { secret: true }) },
    keySets: [['api_key']],
  }),
  /** A self-hosted or proxied base URL. */
  custom_host: group({
    fields: { custom_host: field(CustomHost, { header: 'x-gateway-custom-host', destination: true }) },
    keySets: [['custom_host']],
  }),
  /** OpenAI's organization and project headers. */
  vendor: group({
    fields: {
      // Which of the key's organisations and projects a request acts in (and is billed to).
      vendor_organization: field(z.string(), { header: 'x-gateway-vendor-organization', destination: true }),
      vendor_project: field(z.string(), { header: 'x-gateway-vendor-project', destination: true }),
    },
  }),
  /** Deployment-scoped hosts (resource, deployment, API version). */
  deployment: group({
    fields: {
      resource_name: field(dnsLabel(), { header: 'x-gateway-cloud-a-resource-name', destination: true }),
      deployment_id: field(z.string(), { header: 'x-gateway-cloud-a-deployment-id', destination: true }),
      // A query parameter of the same host and path: not a destination.
      api_version: field(z.string(), { header: 'x-gateway-cloud-a-api-version' }),
      /** The model the deployment runs (e.g. gpt-4o): the answer's `model` where the provider leaves it empty. */
      model_name: field(z.string(), { header: 'x-gateway-cloud-a-model-name' }),
      deployments: field(z.array(DeploymentSchema), { destination: true }),
    },
  }),
  /** Cloud provider A: hosted deployments and endpoints. */
  cloud_a: group({
    fields: {
      cloud_a_region: field(z.string().regex(AZURE_REGION, { message: 'must be an Azure region name such as eastus2 or swedencentral' }), {
        destination: true,
      }),
      cloud_a_deployment_name: field(dnsLabel(), { destination: true }),
      // serverless and managed endpoints live under different domains.
      cloud_a_deployment_type: field(z.enum(['serverless', 'managed']), { destination: true }),
      cloud_a_endpoint_name: field(
        z.string().refine((s) => DNS_LABEL.test(s) || AZURE_ENDPOINT_HOST.test(s), {
          message: 'must be a DNS label (the endpoint name) or the endpoint host under inference.ml.azure.com, models.ai.azure.com or services.ai.azure.com; any other host is a custom_host',
        }),
        { destination: true },
      ),
      cloud_a_api_version: field(z.string()),
    },
    keySets: [
      ['cloud_a_deployment_name', 'cloud_a_deployment_type', 'cloud_a_region', 'cloud_a_api_version'],
      ['cloud_a_endpoint_name', 'cloud_a_deployment_type'],
    ],
  }),
  /** Cloud provider B: access key pair (optionally temporary, with a session token) and region. */
  cloud_b: group({
    fields: {
      // An access key id alone grants nothing, but it names the account's key: kept out of output too.
      cloud_b_access_key_id: field(z.string(), { secret: true, header: 'x-gateway-cloud-b-access-key-id' }),
      cloud_b_secret_access_key: field(z.string(), { secret: true, header: 'x-gateway-cloud-b-secret-access-key' }),
      cloud_b_region: field(z.string().regex(AWS_REGION, { message: 'must be an AWS region name such as us-east-1' }), {
        header: 'x-gateway-cloud-b-region',
        destination: true,
      }),
      cloud_b_session_token: field(z.string(), { secret: true, header: 'x-gateway-cloud-b-session-token' }),
    },
    keySets: [['cloud_b_access_key_id', 'cloud_b_secret_access_key']],
  }),
  /** Cloud provider C: project, region and a service account (whose JSON holds a private key). */
  cloud_c: group({
    fields: {
      cloud_c_project_id: field(z.string(), { header: 'x-gateway-cloud-c-project-id', destination: true }),
      cloud_c_region: field(z.string().regex(GCP_REGION, { message: 'must be a Google Cloud location such as us-central1, global, us or eu' }), {
        header: 'x-gateway-cloud-c-region',
        destination: true,
      }),
      // A destination too: its token_uri is where the assertion signed with its private key is sent.
      cloud_c_service_account_json: field(z.record(z.string(), z.unknown()), { secret: true, destination: true }),
    },
    keySets: [
      ['cloud_c_region', 'cloud_c_service_account_json'],
      ['cloud_c_region', 'cloud_c_project_id'],
    ],
  }),
};

export type FieldGroupName = keyof typeof FIELD_GROUPS;
export const FIELD_GROUP_NAMES = Object.keys(FIELD_GROUPS) as FieldGroupName[];

/** Every provider field of every group (names are unique across groups; a test checks it). */
export const PROVIDER_FIELDS = {
  ...FIELD_GROUPS.api_key.fields,
  ...FIELD_GROUPS.custom_host.fields,
  ...FIELD_GROUPS.vendor.fields,
  ...FIELD_GROUPS.deployment.fields,
  ...FIELD_GROUPS.cloud_a.fields,
  ...FIELD_GROUPS.cloud_b.fields,
  ...FIELD_GROUPS.cloud_c.fields,
};
export type ProviderFieldName = keyof typeof PROVIDER_FIELDS;
export const PROVIDER_FIELD_NAMES = Object.keys(PROVIDER_FIELDS) as ProviderFieldName[];

type Optional<T extends Record<string, z.ZodType>> = { [K in keyof T]: z.ZodOptional<T[K]> };

/** A shape with every field optional, to spread into an object schema. */
export function optionalShape<T extends Record<string, z.ZodType>>(fields: T): Optional<T> {
  const out: Record<string, z.ZodType> = {};
  for (const [k, s] of Object.entries(fields)) out[k] = s.optional();
  return out as Optional<T>;
}

/** The provider fields as an optional shape (config targets and virtual keys accept all of them). */
export const PROVIDER_FIELDS_SHAPE = optionalShape(PROVIDER_FIELDS);

/** Names of the fields whose schema is marked secret, among `fields`. */
export function secretFieldNames(fields: Record<string, z.ZodType>): string[] {
  return Object.keys(fields).filter((k) => secretKindOf(fields[k]!) !== undefined);
}

/** Names of the fields whose meta says `destination`, among `fields`. */
export function destinationFieldNames(fields: Record<string, z.ZodType>): string[] {
  return Object.keys(fields).filter((k) => fieldMeta.get(fields[k]!)?.destination === true);
}

/** Every destination provider field, as a tuple for `z.enum`. */
export const DESTINATION_FIELD_NAMES = destinationFieldNames(PROVIDER_FIELDS) as [string, ...string[]];

/** Every secret provider field. */
export const SECRET_FIELDS: ReadonlySet<string> = new Set(secretFieldNames(PROVIDER_FIELDS));
declareSecretFields(PROVIDER_FIELDS);

/** Loose header → provider field, for each field that has one. */
export const PROVIDER_FIELD_HEADERS: readonly (readonly [header: string, field: ProviderFieldName])[] = PROVIDER_FIELD_NAMES.flatMap(
  (f) => {
    const h = fieldMeta.get(PROVIDER_FIELDS[f])?.header;
    return h === undefined ? [] : [[h, f] as const];
  },
);

/** The key sets of the groups, each with `provider` first, in the order of `groups`. */
export function providerKeySets(...groups: FieldGroupName[]): string[][] {
  return groups.flatMap((g) => ((FIELD_GROUPS[g] as { keySets?: readonly (readonly string[])[] }).keySets ?? []).map((s) => ['provider', ...s]));
}

/** A provider's target fields: the groups it accepts and their one strict schema. */
export interface ProviderFields {
  groups: readonly FieldGroupName[];
  schema: z.ZodObject;
  /** Field names the provider accepts. */
  names: ReadonlySet<string>;
  /** The secret ones among them. */
  secrets: readonly string[];
  /** The destination ones among them: those a request may not set beside a virtual key that does not allow it. */
  destinations: readonly string[];
}

/** The fields of the given groups as one strict zod schema (every field optional), with its secrets. */
export function providerFields(...groups: FieldGroupName[]): ProviderFields {
  const fields: Record<string, z.ZodType> = {};
  for (const g of groups) Object.assign(fields, FIELD_GROUPS[g].fields);
  return {
    groups,
    schema: z.strictObject(optionalShape(fields)),
    names: new Set(Object.keys(fields)),
    secrets: secretFieldNames(fields),
    destinations: destinationFieldNames(fields),
  };
}

/**
 * The fields a virtual key's `allow_client_destination` list names that are not destinations of
 * `accepted` (its provider): naming one would allow nothing, so it is refused rather than ignored.
 */
export function destinationsNotAccepted(accepted: ProviderFields, allow: boolean | readonly string[] | undefined): string[] {
  return Array.isArray(allow) ? allow.filter((f) => !accepted.destinations.includes(f)) : [];
}

/**
 * Provider fields set in `obj` that `accepted` does not accept: each is a
 * 400 naming it, never silently dropped.
 * Fields that are not provider fields (strategy, retry, ...) are not looked at.
 */
export function fieldsNotAccepted(accepted: ProviderFields, obj: Record<string, unknown>): string[] {
  return PROVIDER_FIELD_NAMES.filter((f) => obj[f] !== undefined && !accepted.names.has(f));
}

/**
 * The secret strings held by an object of provider fields (a target's fields): the values of its
 * secret fields, and every string inside a secret object (a service account's private key), in their
 * raw and JSON-escaped forms, longest first. Inside a secret object, strings shorter than 8
 * characters are left out (a service account's `"type"` is no secret; redacting it garbles messages).
 */
export function secretValues(fields: Record<string, unknown>): string[] {
  const out = new Set<string>();
  const add = (v: unknown, minLength: number): void => {
    if (typeof v === 'string') {
      if (v.length < minLength) return;
      out.add(v);
      const escaped = JSON.stringify(v).slice(1, -1);
      if (escaped !== v) out.add(escaped);
    } else if (Array.isArray(v)) v.forEach((x) => add(x, 8));
    else if (v && typeof v === 'object') Object.values(v).forEach((x) => add(x, 8));
  };
  for (const k of SECRET_FIELDS) add(fields[k], 1);
  return [...out].sort((a, b) => b.length - a.length);
}

/** `text` with each of `secrets` replaced by `[redacted]`. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}
