import { z } from 'zod';

/** custom_host: an absolute http(s) URL with a host. */
export const CustomHost = z.string().refine(
  (s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      return false;
    }
  },
  { message: 'custom_host must be an absolute http:// or https:// URL, e.g. "https://llm.internal:8443/v1"' },
);

/*
 * Parts the gateway builds a host from. Each is refused at validation (a 400 naming the field or its
 * header, before any call) unless it is exactly what its name says, so it cannot add a port, a user
 * or a path, or turn the host into an IP literal: the URL the provider builds from it has the host
 * its template says, and that host is still checked by the host guard when it is dialled.
 */

/** One DNS label: letters, digits and inner hyphens, at most 63 characters (never all digits in a region). */
export const DNS_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** An AWS region name (us-east-1, us-gov-west-1, ap-southeast-2, eu-central-1). */
export const AWS_REGION = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/;
/** A Google Cloud location (us-central1, europe-west4, northamerica-northeast1, global, us, eu). */
export const GCP_REGION = /^[a-z]+(?:-[a-z]+\d{0,2})*$/;
/** An Azure region name (eastus, eastus2, swedencentral, westeurope). */
export const AZURE_REGION = /^[a-z]+[a-z0-9]{0,62}$/;

/**
 * The host of an AI Foundry endpoint given whole: DNS labels under one of Azure's inference domains
 * (`my-ep.eastus2.inference.ml.azure.com`). Any other host is a custom_host, which says so.
 */
export const AZURE_ENDPOINT_HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:inference\.ml|models\.ai|services\.ai)\.azure\.com$/i;

/** An Azure resource name or AI Foundry deployment name: one DNS label (a new schema per field: metas are per schema). */
export const dnsLabel = (): z.ZodString => z.string().regex(DNS_LABEL, { message: 'must be a DNS label (letters, digits and inner hyphens, at most 63 characters)' });
