import { of, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { compose, type Stage } from '../../src/pipeline/stage.js';
import type { RequestContext } from '../../src/pipeline/context.js';
import type { GatewayEvent } from '../../src/upstream/events.js';

type Node = { declares: string[] };

/** A stage that records when the request passes it (in) and when the answer does (out). */
const traced = (name: string, trace: string[]): Stage<Node, void> => ({
  name,
  declared: (node) => node.declares.includes(name),
  wrap: () => (inner) => (ctx) => {
    trace.push(`${name} in`);
    const answer: Observable<GatewayEvent> = inner(ctx);
    trace.push(`${name} out`);
    return answer;
  },
});

describe('compose: a stage list in reading order', () => {
  it('the request passes the stages before the core in list order, the answer those after it in list order; undeclared ones are left out', () => {
    const trace: string[] = [];
    const core: Stage<Node, void> = { name: 'core', core: () => () => (trace.push('core'), of()) };
    const list = [traced('a', trace), traced('b', trace), traced('skipped', trace), core, traced('c', trace), traced('d', trace)];
    const makes: string[] = [];
    const counted = list.map((s) => ('wrap' in s ? { ...s, wrap: (n: Node) => (makes.push(s.name), s.wrap(n)) } : s));
    const run = compose(counted, { declares: ['a', 'b', 'c', 'd'] }, undefined);
    expect(makes.sort()).toEqual(['a', 'b', 'c', 'd']);
    run({} as RequestContext);
    // c wraps the core first (the answer meets it first), d wraps c; b wraps d, a wraps b.
    expect(trace).toEqual(['a in', 'b in', 'd in', 'c in', 'core', 'c out', 'd out', 'b out', 'a out']);
  });

  it('a list without a core is refused when compiled', () => {
    expect(() => compose([traced('a', [])], { declares: [] }, undefined)).toThrow(/core/);
  });
});
