import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The documentation stands alone: every relative link in docs/, the READMEs and bench/RESULTS.md
 * names a file that exists and, with a `#fragment`, a heading of that file (as GitHub makes its
 * anchors); no page grows past what one sitting reads (~25 KB: split it by task instead).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const MAX_PAGE_BYTES = 26_000;

const markdownFiles = (): string[] => [
  ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(ROOT, 'docs', f)),
  path.join(ROOT, 'README.md'),
  path.join(ROOT, 'bench/RESULTS.md'),
  ...readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => path.basename(f) === 'README.md')
    .map((f) => path.join(ROOT, 'src', f)),
];

/** Text outside fenced code blocks, where links and headings are markdown. */
const prose = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(readFileSync(file, 'utf8')).matchAll(/^#{1,6}\s+(.*?)\s*#*$/gm)) {
    const slug = heading!.toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

describe('documentation', () => {
  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of markdownFiles()) {
      for (const [, target] of prose(readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z+.-]*:/i.test(target!)) continue;
        const [where, fragment] = target!.split('#', 2) as [string, string | undefined];
        const resolved = where === '' ? file : path.resolve(path.dirname(file), where);
        const from = path.relative(ROOT, file);
        if (!existsSync(resolved)) broken.push(`${from}: ${target} (no such file)`);
        else if (fragment && resolved.endsWith('.md') && !anchorsOf(resolved).has(fragment)) broken.push(`${from}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('keeps every page of docs/ under ~25 KB', () => {
    const large = markdownFiles()
      .filter((f) => f.startsWith(path.join(ROOT, 'docs')))
      .filter((f) => statSync(f).size > MAX_PAGE_BYTES)
      .map((f) => `${path.relative(ROOT, f)}: ${statSync(f).size} bytes`);
    expect(large).toEqual([]);
  });
});
