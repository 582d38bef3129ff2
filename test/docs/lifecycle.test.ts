/**
 * The README's picture of a request's way through names the stages in the order the stage lists
 * hold them (src/pipeline/request-stages.ts, src/pipeline/plan-stages.ts): each stage is a line
 * `name: …` (after its step number, if any), the plan's stages between `plan:` and `accounting:`,
 * a target's after `strategy or target:`. A stage added to a list and not to the picture, or moved
 * in one and not the other, fails here.
 */
import { describe, expect, it } from 'vitest';
import { NODE_STAGES, TARGET_STAGES } from '../../src/pipeline/plan-stages.js';
import { REQUEST_STAGES } from '../../src/pipeline/request-stages.js';
import { codeBlocks, readPage } from './markdown.js';

const readme = readPage('README.md');
const section = readme.slice(readme.indexOf("## A request's way through"));
const picture = codeBlocks('README.md', section.slice(0, section.indexOf('\n## ', 3)))[0]!.code;

/** Where each name's line `name:` is, searching on from the previous one (-1: not found in order). */
function positions(names: readonly string[], from = 0): number[] {
  let at = from;
  return names.map((name) => {
    const re = new RegExp(`^[ \\t]*(?:\\d+ )?${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:`, 'm');
    const m = re.exec(picture.slice(at));
    if (!m) return (at = picture.length + 1), -1;
    at += m.index + m[0].length;
    return at;
  });
}

const names = (stages: readonly { name: string }[]): string[] => stages.map((s) => s.name);

describe("README: a request's way through", () => {
  it('names the request stages in list order', () => {
    expect(positions(names(REQUEST_STAGES))).not.toContain(-1);
  });

  it("names a config level's stages in list order, inside the plan step", () => {
    const [plan, accounting] = positions(['plan', 'accounting']);
    const at = positions(names(NODE_STAGES), plan);
    expect(at).not.toContain(-1);
    expect(Math.max(...at)).toBeLessThan(accounting!);
  });

  it("names a target's stages in list order, inside its config level's core", () => {
    const [core, accounting] = positions(['strategy or target', 'accounting']);
    const at = positions(names(TARGET_STAGES), core);
    expect(at).not.toContain(-1);
    expect(Math.max(...at)).toBeLessThan(accounting!);
  });
});
