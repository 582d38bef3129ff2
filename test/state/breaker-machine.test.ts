import { describe, expect, it } from 'vitest';
import {
  ADMIT,
  ADMIT_SHARED,
  admission,
  type BreakerEvent,
  type Circuit,
  CLOSED,
  FAILURE,
  PROBE_GRANTED,
  reduce,
  RELEASE,
  type SharedCircuit,
  type Step,
  SUCCESS,
} from '../../src/state/breaker-machine.js';
import type { Admission, BreakerPolicy, Transition } from '../../src/state/breaker-store.js';

const policy: BreakerPolicy = { failureThreshold: 3, cooldownMs: 10_000 };
const ME = 'me';

/** Frozen, so a reducer that mutated its input would throw. */
const circuit = (c: Partial<Circuit>): Circuit => Object.freeze({ ...CLOSED, ...c });
const closed2 = circuit({ failures: 2 });
const open = circuit({ status: 'open', failures: 3, openedAt: 1000 });
const probing = circuit({ status: 'half-open', failures: 3, openedAt: 1000, probing: true });
const released = circuit({ status: 'half-open', failures: 3, openedAt: 1000 });
const leasedElsewhere = circuit({ status: 'half-open', failures: 3, openedAt: 1000, leasedUntil: 20_000 });
const shared = (s: Partial<SharedCircuit>): BreakerEvent => ({
  type: 'shared',
  shared: { status: 'closed', failures: 0, openedAt: 0, owner: '', probeUntil: 0, ...s },
  self: ME,
});

const refused = (ms: number): Admission => ({ kind: 'open', retryAfterMs: ms });
const t = (from: Transition['from'], to: Transition['to']): Transition => ({ from, to });

type Row = [
  name: string,
  before: Circuit,
  event: BreakerEvent,
  now: number,
  after: Circuit | 'same',
  transition?: Transition,
  admission?: Admission,
  p?: BreakerPolicy,
];

const rows: Row[] = [
  // admit
  ['admit, closed: passes', CLOSED, ADMIT, 0, 'same', undefined, { kind: 'pass' }],
  ['admit, closed with failures: passes', closed2, ADMIT, 0, 'same', undefined, { kind: 'pass' }],
  ['admit, open: refused with the cooldown left', open, ADMIT, 4000, 'same', undefined, refused(7000)],
  ['admit, open near the end: refused for at least a second', open, ADMIT, 10_500, 'same', undefined, refused(1000)],
  ['admit, open, cooldown over: takes the probe', open, ADMIT, 11_000, probing, t('open', 'half-open'), { kind: 'probe' }],
  ['admit, a shorter cooldown in the policy: probes sooner', open, ADMIT, 2000, probing, t('open', 'half-open'), { kind: 'probe' }, { failureThreshold: 3, cooldownMs: 1000 }],
  ['admit, half-open with the probe out: refused', probing, ADMIT, 99_000, 'same', undefined, refused(1000)],
  ['admit, half-open, probe released: takes it, no transition', released, ADMIT, 11_001, probing, undefined, { kind: 'probe' }],
  ['admit (shared), probe leased elsewhere: refused', leasedElsewhere, ADMIT_SHARED, 15_000, 'same', undefined, refused(1000)],
  ['admit (shared), the lease ran out: takes it', leasedElsewhere, ADMIT_SHARED, 20_000, probing, undefined, { kind: 'probe' }],
  ['admit (local only), a lease elsewhere is not honoured', leasedElsewhere, ADMIT, 15_000, probing, undefined, { kind: 'probe' }],
  // probe granted by the shared store
  ['probe granted, open: half-open, probing', open, PROBE_GRANTED, 0, probing, t('open', 'half-open'), { kind: 'probe' }],
  ['probe granted, half-open: probing, no transition', leasedElsewhere, PROBE_GRANTED, 0, probing, undefined, { kind: 'probe' }],
  // failure
  ['failure, closed: counted', CLOSED, FAILURE, 5, circuit({ failures: 1 })],
  ['failure, closed: the threshold-th opens from now', closed2, FAILURE, 1000, open, t('closed', 'open')],
  ['failure, a threshold of 1 opens on the first', CLOSED, FAILURE, 5, circuit({ status: 'open', failures: 1, openedAt: 5 }), t('closed', 'open'), undefined, { failureThreshold: 1, cooldownMs: 100 }],
  ['failure, open: nothing changes (the cooldown is not extended)', open, FAILURE, 5000, 'same'],
  ['failure, half-open (the probe): re-opens from now', probing, FAILURE, 12_500, circuit({ status: 'open', failures: 3, openedAt: 12_500 }), t('half-open', 'open')],
  ['failure, half-open, leased elsewhere: re-opens, the lease forgotten', leasedElsewhere, FAILURE, 12_500, circuit({ status: 'open', failures: 3, openedAt: 12_500 }), t('half-open', 'open')],
  // success (4xx answers arrive here too: the operator counts them as successes)
  ['success, closed and idle: nothing changes', CLOSED, SUCCESS, 0, 'same'],
  ['success, closed with failures: resets the count, no transition', closed2, SUCCESS, 0, CLOSED],
  ['success, open (admitted before it opened): does not close', open, SUCCESS, 0, 'same'],
  ['success, half-open (the probe): closes', probing, SUCCESS, 0, CLOSED, t('half-open', 'closed')],
  ['success, half-open, leased elsewhere: closes', leasedElsewhere, SUCCESS, 0, CLOSED, t('half-open', 'closed')],
  // release
  ['release, the probe out: let another probe, no transition', probing, RELEASE, 0, released],
  ['release, no probe out: nothing changes', released, RELEASE, 0, 'same'],
  ['release, open: nothing changes', open, RELEASE, 0, 'same'],
  ['release, closed: nothing changes', CLOSED, RELEASE, 0, 'same'],
  // the shared state changed
  ['shared: opened elsewhere', CLOSED, shared({ status: 'open', failures: 3, openedAt: 1000 }), 0, open, t('closed', 'open')],
  ['shared: more failures counted elsewhere', circuit({ failures: 1 }), shared({ failures: 2 }), 0, closed2],
  ['shared: our probe, still ours', probing, shared({ status: 'half-open', failures: 3, openedAt: 1000, owner: ME, probeUntil: 70_000 }), 0, probing],
  ['shared: the probe is held elsewhere', released, shared({ status: 'half-open', failures: 3, openedAt: 1000, owner: 'other', probeUntil: 20_000 }), 0, leasedElsewhere],
  ['shared: our probe, taken over elsewhere', probing, shared({ status: 'half-open', failures: 3, openedAt: 1000, owner: 'other', probeUntil: 20_000 }), 0, leasedElsewhere],
  ['shared: a lease in our name never hands the probe back', released, shared({ status: 'half-open', failures: 3, openedAt: 1000, owner: ME, probeUntil: 70_000 }), 0, released],
  ['shared: closed elsewhere while probing', probing, shared({}), 0, CLOSED, t('half-open', 'closed')],
  ['shared: re-opened elsewhere', leasedElsewhere, shared({ status: 'open', failures: 3, openedAt: 30_000 }), 0, circuit({ status: 'open', failures: 3, openedAt: 30_000 }), t('half-open', 'open')],
];

describe('breaker machine: reduce', () => {
  it.each(rows)('%s', (_, before, event, now, after, transition, adm, p = policy) => {
    const step = event.type === 'admit' || event.type === 'failure' ? reduce(before, event, now, p) : reduce(before, event);
    if (after === 'same') expect(step.state).toBe(before);
    else expect(step.state).toEqual(after);
    expect(step.transition).toEqual(transition);
    expect(step.admission).toEqual(adm);
  });

  it('admission (peek) answers what admit would, without changing anything', () => {
    for (const [, before, event, now, , , adm, p = policy] of rows) {
      if (event.type !== 'admit') continue;
      expect(admission(before, now, p, event.leases)).toEqual(adm);
    }
    expect(admission(undefined, 0, policy)).toEqual({ kind: 'pass' });
  });

  it('a full cycle: closed → open → half-open → open → half-open → closed, then the full threshold again', () => {
    let c: Circuit = CLOSED;
    const seen: (Transition | undefined)[] = [];
    const apply = (s: Step): Step => {
      c = s.state;
      seen.push(s.transition);
      return s;
    };
    const fail = (now: number) => apply(reduce(c, FAILURE, now, policy));
    const admit = (now: number) => apply(reduce(c, ADMIT, now, policy)).admission!.kind;
    fail(1);
    fail(2);
    fail(3);
    expect(admit(5000)).toBe('open');
    expect(admit(10_003)).toBe('probe');
    fail(10_100);
    expect(admit(20_099)).toBe('open');
    expect(admit(20_100)).toBe('probe');
    apply(reduce(c, SUCCESS));
    fail(30_000);
    fail(30_001);
    expect(c.status).toBe('closed');
    fail(30_002);
    expect(seen.filter(Boolean)).toEqual([
      t('closed', 'open'),
      t('open', 'half-open'),
      t('half-open', 'open'),
      t('open', 'half-open'),
      t('half-open', 'closed'),
      t('closed', 'open'),
    ]);
  });
});
