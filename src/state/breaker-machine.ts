import type { Admission, BreakerPolicy, CircuitStatus, Transition } from './breaker-store.js';

/**
 * The circuit breaker's state machine, written once: a pure reducer over one circuit's state. The
 * memory store keeps these states in a map; the Redis store keeps them as its local mirror (and its
 * Lua scripts, `redis/breaker-scripts.ts`, make the same moves on the shared state; a test drives
 * both with the same events and compares).
 *
 *   closed ── failure × threshold ──▶ open ── cooldown over, admit ──▶ half-open (one probe out)
 *     ▲                                ▲                                  │
 *     └──────── success ───────────────┼──────────── success ─────────────┤
 *                                      └──────────── failure ─────────────┘
 *
 * - A success while closed resets the count; a success while open (a request admitted before the
 *   circuit opened) changes nothing: only a half-open circuit can close.
 * - A failure while open changes nothing (the cooldown is not extended); a failure while half-open
 *   re-opens from that moment.
 * - Half-open lets exactly one probe through; a probe that ends with no verdict is released, so the
 *   next request probes. A shared store may also know that another instance holds the probe
 *   (`leasedUntil`), and refuses until then while it can reach the shared state.
 * - What counts as a failure (5xx, transport errors; 4xx count as successes) is the caller's call:
 *   the operator decides which event to send.
 */
export interface Circuit {
  readonly status: CircuitStatus;
  /** Consecutive failures counted while closed (kept as they were once it opens). */
  readonly failures: number;
  /** When it last opened (ms, the caller's clock). */
  readonly openedAt: number;
  /** The probe is out, taken here. */
  readonly probing: boolean;
  /** Another instance holds the probe until then (ms); 0 for none. Only a shared store sets it. */
  readonly leasedUntil: number;
}

/** A circuit nothing is known about: closed, no failures. */
export const CLOSED: Circuit = Object.freeze({ status: 'closed', failures: 0, openedAt: 0, probing: false, leasedUntil: 0 });

/** A circuit's state as the shared store (Redis) holds and publishes it. */
export interface SharedCircuit {
  status: CircuitStatus;
  failures: number;
  openedAt: number;
  /** Instance holding the probe lease ('' none). */
  owner: string;
  /** Until when that lease runs (ms). */
  probeUntil: number;
}

/** Events that read the clock and the policy. */
export type TimedEvent =
  /**
   * A request asks to pass: if the cooldown is over and no probe is out, it takes the probe.
   * `leases`: honour another instance's probe lease (a shared store that can reach the shared state).
   */
  | { readonly type: 'admit'; readonly leases: boolean }
  | { readonly type: 'failure' };

/** Events that do not. */
export type UntimedEvent =
  /** The shared store granted this instance the probe: take it. */
  | { readonly type: 'probe-granted' }
  | { readonly type: 'success' }
  /** The probe ended with no verdict (cancelled): let another request probe. */
  | { readonly type: 'release' }
  /** The shared state changed (a message, a reply, a snapshot); `self` is this instance as probe owner. */
  | { readonly type: 'shared'; readonly shared: SharedCircuit; readonly self: string };

export type BreakerEvent = TimedEvent | UntimedEvent;

export const ADMIT: TimedEvent = Object.freeze({ type: 'admit', leases: false });
export const ADMIT_SHARED: TimedEvent = Object.freeze({ type: 'admit', leases: true });
export const FAILURE: TimedEvent = Object.freeze({ type: 'failure' });
export const SUCCESS: UntimedEvent = Object.freeze({ type: 'success' });
export const RELEASE: UntimedEvent = Object.freeze({ type: 'release' });
export const PROBE_GRANTED: UntimedEvent = Object.freeze({ type: 'probe-granted' });

export interface Step {
  /** The state after the event: the same object when the event changed nothing. */
  state: Circuit;
  /** The status change, when there was one. */
  transition?: Transition;
  /** For `admit`: what the request may do. */
  admission?: Admission;
}

/** Refusals say how long is left, at least a second (a Retry-After of 0 invites a hot loop). */
export function refuse(leftMs: number): Admission {
  return { kind: 'open', retryAfterMs: Math.max(leftMs, 1000) };
}

const PASS: Admission = Object.freeze({ kind: 'pass' });
const PROBE: Admission = Object.freeze({ kind: 'probe' });

/** What a request may do now, without changing anything (`admit` with no side effects). */
export function admission(c: Circuit | undefined, now: number, policy: BreakerPolicy, leases = false): Admission {
  if (!c || c.status === 'closed') return PASS;
  const left = c.openedAt + policy.cooldownMs - now;
  if (left > 0 || c.probing || (leases && c.leasedUntil > now)) return refuse(left);
  return PROBE;
}

function takeProbe(c: Circuit): Step {
  const state: Circuit = { status: 'half-open', failures: c.failures, openedAt: c.openedAt, probing: true, leasedUntil: 0 };
  return c.status === 'half-open' ? { state, admission: PROBE } : { state, admission: PROBE, transition: { from: c.status, to: 'half-open' } };
}

function changed(c: Circuit, state: Circuit): Step {
  return c.status === state.status ? { state } : { state, transition: { from: c.status, to: state.status } };
}

/** The one breaker reducer: the state after `event`, and the transition it made. Pure. */
export function reduce(c: Circuit, event: TimedEvent, now: number, policy: BreakerPolicy): Step;
export function reduce(c: Circuit, event: UntimedEvent): Step;
export function reduce(c: Circuit, event: BreakerEvent, now = 0, policy?: BreakerPolicy): Step {
  switch (event.type) {
    case 'admit': {
      const a = admission(c, now, policy!, event.leases);
      return a.kind === 'probe' ? takeProbe(c) : { state: c, admission: a };
    }
    case 'probe-granted':
      return takeProbe(c);
    case 'failure':
      if (c.status === 'open') return { state: c };
      if (c.status === 'half-open') return changed(c, { status: 'open', failures: c.failures, openedAt: now, probing: false, leasedUntil: 0 });
      return c.failures + 1 >= policy!.failureThreshold
        ? changed(c, { status: 'open', failures: c.failures + 1, openedAt: now, probing: false, leasedUntil: 0 })
        : { state: { status: 'closed', failures: c.failures + 1, openedAt: c.openedAt, probing: false, leasedUntil: 0 } };
    case 'success':
      if (c.status === 'open' || isIdle(c)) return { state: c };
      return changed(c, CLOSED);
    case 'release':
      return c.probing ? { state: { status: c.status, failures: c.failures, openedAt: c.openedAt, probing: false, leasedUntil: c.leasedUntil } } : { state: c };
    case 'shared': {
      const s = event.shared;
      const leasedToUs = s.status === 'half-open' && s.owner === event.self;
      return changed(c, {
        status: s.status,
        failures: s.failures,
        openedAt: s.openedAt,
        // Only a probe this process is still running counts as ours: the shared state can take it
        // away, never hand it back.
        probing: c.probing && leasedToUs,
        leasedUntil: s.status === 'half-open' && s.owner !== '' && !leasedToUs ? s.probeUntil : 0,
      });
    }
  }
}

/** Closed with nothing counted and no probe: the state of a circuit nothing is known about. */
export function isIdle(c: Circuit): boolean {
  return c.status === 'closed' && c.failures === 0 && !c.probing;
}
