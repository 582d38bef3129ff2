import { describe, expect, it } from 'vitest';
import { IdVariants } from '../../src/util/id-variants.js';

describe('IdVariants', () => {
  it('makes each (id, variant) once and returns the same value after', () => {
    const made: string[] = [];
    const t = new IdVariants((id, v) => {
      made.push(`${id}/${v}`);
      return { id, v };
    });
    const first = t.get('a', 1);
    expect(t.get('a', 1)).toBe(first);
    expect(t.get('a', 0)).toEqual({ id: 'a', v: 0 });
    expect(t.get('b', 1)).toEqual({ id: 'b', v: 1 });
    expect(made).toEqual(['a/1', 'a/0', 'b/1']);
  });

  it('is bounded: past maxIds distinct ids it starts over', () => {
    let calls = 0;
    const t = new IdVariants((id) => {
      calls++;
      return id;
    }, 3);
    for (const id of ['a', 'b', 'c']) t.get(id, 0);
    expect(t.size).toBe(3);
    t.get('d', 0);
    expect(t.size).toBe(1);
    t.get('a', 0); // made again
    expect(calls).toBe(5);
  });

  it('never keeps an id longer than maxIdLength: its value is made each time', () => {
    let calls = 0;
    const t = new IdVariants((id) => {
      calls++;
      return id.length;
    }, 10, 8);
    const long = 'x'.repeat(9);
    expect([t.get(long, 0), t.get(long, 0)]).toEqual([9, 9]);
    expect(calls).toBe(2);
    expect(t.size).toBe(0);
    t.get('x'.repeat(8), 0);
    t.get('x'.repeat(8), 0);
    expect([calls, t.size]).toEqual([3, 1]);
  });
});
