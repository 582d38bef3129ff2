/**
 * The docs describe the product as it is, and comments say why the code is as it is; history lives
 * in git. These are the marks a diary leaves: issue numbers, working sessions, citations of documents
 * that are not in the repository. (This file names them, so it is left out.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, docPages, readPage } from './markdown.js';

const MARKS: readonly RegExp[] = [
  /\bDESIGN\.md\b/,
  /\/work\/shared\b/,
  /\bproviders\.md §/,
  /\b[Ii]ssue \d+\b/,
  /\bother engineers\b/,
  /\b(?:first|second|third|fourth|fifth|sixth|seventh|next|last) session\b/i,
  /\bsession (?:after|before)\b/,
];

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'results' ? [] : sources(p);
    return /\.(?:ts|mts|mjs|lua)$/.test(e.name) ? [p] : [];
  });
}

function marked(file: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) => (MARKS.some((m) => m.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

describe('no diary', () => {
  it('in README.md, docs/, CONTRIBUTING.md, CHANGELOG.md and benchmarks/README.md', () => {
    const pages = [...docPages(), 'benchmarks/README.md', 'grafana/README.md'];
    expect(pages.flatMap((p) => marked(p, readPage(p)))).toEqual([]);
  });

  it('in src/, test/, benchmarks/ and scripts/', () => {
    const self = relative(ROOT, new URL(import.meta.url).pathname);
    const files = ['src', 'test', 'benchmarks', 'scripts'].flatMap(sources).filter((f) => f !== self);
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((f) => marked(f, readFileSync(join(ROOT, f), 'utf8')))).toEqual([]);
  });

  it('README.md stays a short introduction (at most about 400 lines)', () => {
    expect(readPage('README.md').split('\n').length).toBeLessThanOrEqual(400);
  });
});
