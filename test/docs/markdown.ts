/**
 * Reading the repository's Markdown the way a reader sees it: fenced code blocks (with the HTML
 * comment just before each, where a page marks a block as not runnable), headings and their GitHub
 * anchors, and relative links. Shared by the docs tests.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** README.md, CONTRIBUTING.md, CHANGELOG.md and every page under docs/ (paths relative to the root). */
export function docPages(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
    );
  return ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...walk('docs')].map((p) => relative(ROOT, join(ROOT, p)));
}

export function readPage(page: string): string {
  return readFileSync(join(ROOT, page), 'utf8');
}

export interface CodeBlock {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** The reason given by `<!-- not-run: reason -->` on the line before the fence (blank lines allowed). */
  notRun?: string;
}

/** Every fenced block of a page (``` fences at the start of a line), in order. */
export function codeBlocks(page: string, text = readPage(page)): CodeBlock[] {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    let j = i + 1;
    while (j < lines.length && !lines[j]!.startsWith(fence)) j++;
    let k = i - 1;
    while (k >= 0 && lines[k]!.trim() === '') k--;
    const marker = k >= 0 ? /^<!--\s*not-run:\s*(.+?)\s*-->$/.exec(lines[k]!.trim()) : null;
    blocks.push({ page, line: i + 1, lang: open[2]!, code: lines.slice(i + 1, j).join('\n'), ...(marker ? { notRun: marker[1]! } : {}) });
    i = j;
  }
  return blocks;
}

/** Lines outside fenced blocks (headings and links are read from these only). */
function prose(text: string): string[] {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const m = /^(`{3,})/.exec(line);
    if (m) {
      if (!fence) fence = m[1];
      else if (line.startsWith(fence)) fence = undefined;
      out.push('');
      continue;
    }
    out.push(fence ? '' : line);
  }
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` removed, spaces to `-`. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page's headings, numbered as GitHub numbers repeats (`x`, `x-1`, ...). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative links `[text](target)` outside code blocks (http(s) and mailto links left out). */
export function relativeLinks(text: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  prose(text).forEach((line, i) => {
    for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (!/^(?:https?:|mailto:)/.test(target)) out.push({ target, line: i + 1 });
    }
  });
  return out;
}
