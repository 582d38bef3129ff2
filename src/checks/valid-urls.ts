import { z } from 'zod';
import { CheckHttpError } from './http.js';
import { phaseText } from './text.js';
import type { CheckDef } from './types.js';

const Params = z.strictObject({ onlyDNS: z.boolean().default(false) });
type Params = z.infer<typeof Params>;

/** http(s) URLs in prose; a trailing `.`, `,`, `)` etc. is punctuation, not part of the URL. */
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const TRAILING = /[.,;:!?)\]}'"]+$/;
const HOST_SYNTAX = /^localhost$|^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$|^\d{1,3}(?:\.\d{1,3}){3}$|^\[[0-9a-f:.]+\]$/i;

/** At most this many distinct hosts are looked up per check; more is a failure, not a pass. */
export const MAX_LOOKUPS = 10;
const LOOKUP_TIMEOUT_MS = 3_000;

/**
 * Passes when every http(s) URL in the text (every text sent, or the answer) is valid. Valid means
 * well-formed with a plausible host (a dotted name, `localhost` or an IP address), and — only when the operator enabled URL lookups
 * (CheckDeps.allowUrlLookups) — that its host resolves (`onlyDNS: true`) or that a HEAD request
 * answers below 400 (a redirect counts as an answer; it is not followed). Lookups go through the
 * host guard: a URL pointing at a private address is invalid. With lookups disabled `onlyDNS` has
 * no effect, and `data.lookups` says so. No URL at all passes.
 */
export const validUrls: CheckDef<Params> = {
  io: true,
  id: 'validUrls',
  params: Params,
  supportsNot: true,
  async run(input, p, deps, signal) {
    const urls = new Set<string>();
    for (const m of phaseText(input, 'allText').matchAll(URL_IN_TEXT)) urls.add(m[0].replace(TRAILING, ''));
    const invalid: string[] = [];
    const parsed: URL[] = [];
    for (const u of urls) {
      let url: URL | undefined;
      try {
        url = new URL(u);
      } catch {
        url = undefined;
      }
      if (url && HOST_SYNTAX.test(url.hostname)) parsed.push(url);
      else invalid.push(u);
    }
    let lookups: 'disabled' | 'dns' | 'http' = 'disabled';
    if (deps.allowUrlLookups && parsed.length > 0) {
      lookups = p.onlyDNS ? 'dns' : 'http';
      const targets = p.onlyDNS ? [...new Map(parsed.map((u) => [u.hostname, u])).values()] : parsed;
      if (targets.length > MAX_LOOKUPS) throw new Error(`more than ${MAX_LOOKUPS} URLs to look up`);
      const results = await Promise.all(
        targets.map(async (u) => {
          try {
            if (p.onlyDNS) await deps.http.resolve(u.hostname.replace(/^\[|\]$/g, ''), LOOKUP_TIMEOUT_MS, signal);
            else {
              const res = await deps.http.request(u.href, { method: 'HEAD', timeoutMs: LOOKUP_TIMEOUT_MS, signal, maxBytes: 0 });
              if (res.status >= 400) return u.href;
            }
            return undefined;
          } catch (e) {
            if (e instanceof CheckHttpError && e.kind === 'redirect') return undefined;
            if (signal.aborted) throw e;
            return u.href;
          }
        }),
      );
      for (const r of results) if (r !== undefined) invalid.push(r);
    }
    return { verdict: invalid.length === 0, data: { urls: urls.size, invalid: invalid.length, lookups } };
  },
};
