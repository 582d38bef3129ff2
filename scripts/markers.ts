/**
 * Generated parts of a Markdown page sit between `<!-- NAME:start -->` and `<!-- NAME:end -->`, so
 * a script can rewrite them and a test can compare them with what the script would write now.
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** The text between the markers (without them); throws when the page lacks them. */
export function between(text: string, name: string): string {
  const start = `<!-- ${name}:start -->\n`;
  const end = `<!-- ${name}:end -->`;
  const a = text.indexOf(start);
  const b = text.indexOf(end, a);
  if (a < 0 || b < 0) throw new Error(`no <!-- ${name}:start --> ... <!-- ${name}:end --> markers`);
  return text.slice(a + start.length, b);
}

/** The page with the text between the markers replaced by `content`. */
export function replaceBetween(text: string, name: string, content: string): string {
  const old = between(text, name);
  const start = text.indexOf(`<!-- ${name}:start -->\n`) + `<!-- ${name}:start -->\n`.length;
  return text.slice(0, start) + content + text.slice(start + old.length);
}

/**
 * The command line of a table script: with `--write` the page is rewritten, else it is checked and
 * the process exits 1 when it differs from what would be written.
 */
export function writeOrCheck(page: string, name: string, render: () => string, argv = process.argv.slice(2)): void {
  const text = readFileSync(page, 'utf8');
  const next = replaceBetween(text, name, render());
  if (argv.includes('--write')) {
    if (next !== text) writeFileSync(page, next);
    process.stdout.write(`${page}: ${next === text ? 'unchanged' : 'rewritten'}\n`);
  } else if (next !== text) {
    process.stderr.write(`${page}: the ${name} table is out of date; run with --write\n`);
    process.exitCode = 1;
  }
}
