import { describe, expect, it } from 'vitest';
import { Flow, type Pausable } from '../../src/upstream/flow.js';

/** A source that records what it was told. */
function source(): Pausable & { calls: string[] } {
  const calls: string[] = [];
  return { calls, pause: () => calls.push('pause'), resume: () => calls.push('resume') };
}

describe('Flow', () => {
  it('pauses and resumes attached sources with the client, once per change', () => {
    const f = new Flow();
    const a = source();
    f.attach(a);
    f.pause();
    f.pause();
    expect(f.held).toBe(true);
    expect(f.paused).toBe(true);
    f.resume();
    f.resume();
    expect(f.paused).toBe(false);
    expect(a.calls).toEqual(['pause', 'resume']);
  });

  it('pauses a source attached while paused at once, and leaves a detached one alone', () => {
    const f = new Flow();
    f.pause();
    const a = source();
    const detach = f.attach(a);
    expect(a.calls).toEqual(['pause']);
    detach();
    f.resume();
    expect(a.calls).toEqual(['pause']);
  });

  it('tells listeners of every change until they are removed', () => {
    const f = new Flow();
    const seen: string[] = [];
    const off = f.onChange(() => seen.push(`${f.held}/${f.paused}`));
    f.pause();
    f.resume();
    off();
    f.pause();
    expect(seen).toEqual(['true/true', 'false/false']);
  });

  it('with joined requests, pauses the shared upstream only while every client is paused or gone', () => {
    const leader = new Flow();
    const follower = new Flow();
    const a = source();
    leader.attach(a);
    const leave = leader.join(follower);

    leader.pause(); // the follower still reads: the upstream goes on
    expect(leader.held).toBe(true);
    expect(leader.paused).toBe(false);
    follower.pause(); // now nobody reads
    expect(leader.paused).toBe(true);
    follower.resume();
    expect(leader.paused).toBe(false);

    leader.close(); // the leader's client left: the follower alone decides
    follower.pause();
    expect(leader.paused).toBe(true);
    leave(); // the follower left too, with the leader gone: stays paused
    expect(leader.paused).toBe(true);
    expect(a.calls).toEqual(['pause', 'resume', 'pause']);
  });

  it('a follower that leaves no longer keeps the upstream going', () => {
    const leader = new Flow();
    const follower = new Flow();
    const a = source();
    leader.attach(a);
    const leave = leader.join(follower);
    leader.pause();
    expect(leader.paused).toBe(false);
    const changes: boolean[] = [];
    leader.onChange(() => changes.push(leader.paused));
    leave();
    expect(leader.paused).toBe(true);
    expect(changes).toEqual([true]);
    expect(a.calls).toEqual(['pause']);
  });
});
