/**
 * Small pieces: no file in src/ over 300 lines and no function over 60 lines, so that each can be
 * read whole. A data table (a schema object, a lookup table) may run longer when splitting it would
 * only scatter it: those are named in ALLOWED, each with its reason.
 * Parses the sources with the TypeScript compiler API, so it needs no build and names file:line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../../src');
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 60;

/** Data tables allowed over the limits: `file` (relative to src/) or `file#function` → why. */
const ALLOWED: Record<string, string> = {};


function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const excused = (key: string): boolean => key in ALLOWED;

function lineCount(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

/** The name of a function-like node: its own, or that of the declaration or property it is the value of. */
function nameOf(node: ts.SignatureDeclaration): string {
  if (node.name) return node.name.getText();
  const p = node.parent;
  if ((ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && p.name) return p.name.getText();
  return '<anonymous>';
}

interface Measure {
  /** `file` relative to src/, or `file#function`: the key ALLOWED uses. */
  key: string;
  at: string;
  lines: number;
}

/**
 * The files and functions over the limits; a function is measured from its first line (signature) to
 * its last. A function nested in one over the limit is not measured again: splitting the outer one
 * is the fix for both.
 */
function overLimits(file: string, rel: string): Measure[] {
  const text = readFileSync(file, 'utf8');
  const out: Measure[] = [];
  const fileLines = lineCount(text);
  if (fileLines > MAX_FILE_LINES) out.push({ key: rel, at: `src/${rel}:1`, lines: fileLines });
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const lines = sf.getLineAndCharacterOfPosition(node.end).line - start + 1;
      if (lines > MAX_FUNCTION_LINES) {
        out.push({ key: `${rel}#${nameOf(node)}`, at: `src/${rel}:${start + 1}`, lines });
        return;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const measured = walk(SRC).flatMap((f) => overLimits(f, relative(SRC, f).split('\\').join('/')));
const isFile = (m: Measure): boolean => !m.key.includes('#');

describe('src/ sizes', () => {
  it(`no file over ${MAX_FILE_LINES} lines`, () => {
    const long = measured
      .filter((m) => isFile(m) && !excused(m.key))
      .map((m) => `${m.at} has ${m.lines} lines (max ${MAX_FILE_LINES}): split it by job`);
    expect(long).toEqual([]);
  });

  it(`no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = measured
      .filter((m) => !isFile(m) && !excused(m.key))
      .map((m) => `${m.at} ${m.key.split('#')[1]} has ${m.lines} lines (max ${MAX_FUNCTION_LINES}): split it`);
    expect(long).toEqual([]);
  });

  it('every allow-list entry is still over the limits and says why', () => {
    const over = new Set(measured.map((m) => m.key));
    const stale = Object.keys(ALLOWED).filter((k) => !over.has(k));
    expect(stale, 'remove entries that are no longer over the limits').toEqual([]);
    const bare = Object.entries(ALLOWED).filter(([, why]) => why.trim() === '').map(([k]) => k);
    expect(bare).toEqual([]);
  });
});
