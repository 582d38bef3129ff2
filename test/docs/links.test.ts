/**
 * Every relative link in README.md and docs/ leads somewhere: the file exists, and a `#anchor` is a
 * heading of that page. Pages move and headings get renamed; a link that silently leads nowhere is
 * what this catches.
 */
import { existsSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, anchors, docPages, readPage, relativeLinks } from './markdown.js';

describe('links in the docs', () => {
  it.each(docPages())('%s links only to files and headings that exist', (page) => {
    const broken: string[] = [];
    for (const { target, line } of relativeLinks(readPage(page))) {
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const dest = file === '' ? page : normalize(join(dirname(page), file));
      if (!existsSync(join(ROOT, dest))) {
        broken.push(`${page}:${line} → ${target} (no file ${relative(ROOT, join(ROOT, dest))})`);
        continue;
      }
      if (anchor && dest.endsWith('.md') && !anchors(readPage(dest)).has(anchor)) {
        broken.push(`${page}:${line} → ${target} (no heading #${anchor} in ${dest})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
