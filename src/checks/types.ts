/**
 * Guardrail and hook checks: one signature for every check id.
 *
 * A check is a `CheckDef`: a zod schema of its parameters, validated once when the config is
 * (`resolveCheck` in registry.ts turns `{id, parameters}` into a `ResolvedCheck` or a 400
 * invalid_config naming the path), and `run`, a plain function of the request/response and the
 * validated parameters. Checks know nothing of hooks, deny, feedback, async or streams: the stage
 * operators do, and call checks through `runCheck` (registry.ts), which also applies `not`.
 *
 * How a stage uses it (per request):
 *   1. build one `CheckInput` for the stage (`requestInput` / `responseInput` in text.ts extract the
 *      texts once; every check of the stage shares them);
 *   2. for each ResolvedCheck of the hook, `runCheck(resolved, input, deps, signal)` with a signal
 *      that aborts at the check's time limit; concurrently unless the hook says `sequential`;
 *   3. a resolved outcome is the verdict; a throw, a rejection or the time limit is a failed check
 *      with `error` (fail closed), unless the hook sets `fail_on_error: false`;
 *   4. a mutator's `transformed` body replaces the request body (before the cache key is made) or
 *      the response body; sequential mutators see the previous one's output (rebuild the input).
 *      A webhook's transformed request body comes from a third party: validate it as a client's
 *      body is (config/bodies.ts) before it is sent.
 *
 * Rules every check keeps:
 * - `run` never logs and never puts the checked text in `data` where avoidable (counts, positions,
 *   categories and rule names instead), so a 446 never quotes the denied answer.
 * - `run` never blocks the event loop on unbounded work: config regexes go through
 *   util/bounded-regex.ts; network goes only through `deps.http` (host guard, no redirects, time
 *   limits, no gateway or provider secret sent).
 * - `run` honours `signal` for any I/O.
 */
import type { z } from 'zod';
import type { CheckHttp } from './http.js';
import type { JwksCache } from './jwks.js';

export type CheckPhase = 'request' | 'response';
export type CheckEndpoint = 'chat' | 'completions' | 'embeddings' | 'responses' | 'messages';

export interface CheckInput {
  phase: CheckPhase;
  endpoint: CheckEndpoint;
  request: {
    /** The parsed request body as it stands at this stage (after earlier mutators). */
    body: Record<string, unknown> | undefined;
    /**
     * The text of the latest turn: the last `user` message (chat; the last message when none is a
     * user's), the prompt (completions; the last one of a prompt array), the last input string
     * (embeddings). Counting and shape checks read this one.
     */
    text: string;
    /**
     * Every text that will be sent: all messages' text content (string content and text parts,
     * every role) / every prompt / every input string, joined with "\n". Content checks that guard
     * what leaves the gateway (regexMatch, contains, pii, containsCode, validUrls) read this one.
     */
    allText: string;
  };
  /** Present in the response phase. `text`: every choice's message content (chat) or text, joined. */
  response?: { body: unknown; text: string; status: number };
  /** The request's metadata (x-gateway-metadata). */
  metadata: Record<string, unknown>;
  /** The client's request headers (lower-case names). Read by jwt; never forwarded as they are. */
  headers: Record<string, string | string[] | undefined>;
  /** The model of the request body. */
  model?: string;
  /** The provider of the target (response phase) or of the plan, when known. */
  provider?: string;
  /** The request's trace id, sent to webhook and log receivers. */
  traceId?: string;
}

export interface CheckOutcome {
  /** true = pass. */
  verdict: boolean;
  /** Why: counts, names, positions; never the checked text itself where avoidable. */
  data?: unknown;
  /** Mutators only: the new body of the request and/or the response. */
  transformed?: { request?: { body: Record<string, unknown> }; response?: { body: unknown } };
}

/** What checks may use besides their input: built once by the composition root. */
export interface CheckDeps {
  /** Milliseconds since the epoch (injected for tests: JWT expiry, JWKS cache age). */
  now: () => number;
  /** The host-guarded HTTP client (http.ts): webhook, log, JWKS, validUrls lookups. */
  http: CheckHttp;
  /** JWKS documents cached per jwksUri (jwks.ts). */
  jwks: JwksCache;
  /** validUrls may resolve or fetch URLs only when the operator enabled it. */
  allowUrlLookups: boolean;
}

export interface CheckDef<P = unknown> {
  /** The bare name, e.g. 'regexMatch'; the registry serves it as `default.<name>`. */
  id: string;
  /** The parameters, strict (unknown keys are a config error). `not` is added by the registry. */
  params: z.ZodType<P>;
  /** Changes the request or response (`transformed`); never inverted. */
  mutator?: boolean;
  /**
   * The check does I/O (network, a remote key set): it gets an abort signal and a time limit. A check
   * without it is a plain computation over the input, run without either (a timer and an
   * AbortController per check cost more than most checks themselves).
   */
  io?: true;
  /** Takes `not: true`, which inverts the verdict (runCheck does it). */
  supportsNot?: boolean;
  /** Which phases the check makes sense in (default both); the plan builder may refuse others. */
  phases?: readonly CheckPhase[];
  /** Resolves to the outcome; throws (or rejects) when it cannot decide. */
  run(input: CheckInput, params: P, deps: CheckDeps, signal: AbortSignal): CheckOutcome | Promise<CheckOutcome>;
}
