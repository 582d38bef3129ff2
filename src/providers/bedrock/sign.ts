import { SignatureV4 } from '@smithy/signature-v4';
import { Hash } from '@smithy/hash-node';
import { GatewayError } from '../../errors/gateway-error.js';
import type { PrepareContext, Target, UpstreamRequest } from '../types.js';
import { regionOf, signsRequests } from './to-provider.js';

/** The SigV4 service name of Bedrock's runtime and control plane alike (not `bedrock-runtime`). */
export const SIGNING_SERVICE = 'bedrock';

const sha256 = Hash.bind(null, 'sha256');

/**
 * One signer per target (targets live as long as their cached plan): the signer keeps its derived
 * signing key per day, so a request costs two HMACs and two hashes, not the five-HMAC key chain.
 */
const signers = new WeakMap<Target, SignatureV4>();

function signerFor(target: Target): SignatureV4 {
  let s = signers.get(target);
  if (!s) {
    const x = target.extra!;
    s = new SignatureV4({
      service: SIGNING_SERVICE,
      region: regionOf(target),
      credentials: {
        accessKeyId: x.cloud_b_access_key_id as string,
        secretAccessKey: x.cloud_b_secret_access_key as string,
        sessionToken: x.cloud_b_session_token as string | undefined,
      },
      sha256,
      // Every path segment is escaped again (the model id was encoded once on the wire): AWS's rule for non-S3 services.
      uriEscapePath: true,
    });
    signers.set(target, s);
  }
  return s;
}

/**
 * Signs the request with SigV4 at `ctx.now()` (`x-amz-date`, `x-amz-content-sha256`, the session
 * token as `x-amz-security-token`, `authorization`), covering every header it carries, `host`
 * included. A target without a key pair (a Bedrock API key in `authorization`) is sent as built.
 */
export async function signBedrock(request: UpstreamRequest, target: Target, ctx: PrepareContext): Promise<UpstreamRequest> {
  if (!signsRequests(target)) return request;
  const url = new URL(request.origin);
  let signed;
  try {
    signed = await signerFor(target).sign(
      {
        method: request.method,
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port === '' ? undefined : Number(url.port),
        path: request.path,
        query: {},
        headers: { ...request.headers },
        body: request.body,
      },
      { signingDate: new Date(ctx.now()) },
    );
  } catch (e) {
    throw new GatewayError('invalid_config', `Could not sign the request for provider bedrock: ${(e as Error).message}`, { param: 'cloud_b_access_key_id' });
  }
  return { ...request, headers: signed.headers as Record<string, string> };
}
