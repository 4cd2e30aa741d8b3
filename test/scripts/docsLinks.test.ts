// The README and docs/ as a newcomer reads them: every document they link or name is in the
// repository, and the README opens with how to try it.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
const DOCS = [
  path.join(REPO, 'README.md'),
  ...readdirSync(path.join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join(REPO, 'docs', f)),
];

/** Relative link targets of a Markdown file (no URLs, no in-page anchors), without their anchors. */
function relativeLinks(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
    .map((target) => target.split('#')[0]!);
}

describe('README and docs/ (as a newcomer reads them)', () => {
  it('every relative link points at a file in the repository', () => {
    const missing: string[] = [];
    for (const file of DOCS) {
      for (const target of relativeLinks(readFileSync(file, 'utf8'))) {
        if (!existsSync(path.resolve(path.dirname(file), target))) missing.push(`${path.relative(REPO, file)} -> ${target}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it('names no document that is not in the repository: no design notes kept outside it, no docs/ file that is missing', () => {
    const named: string[] = [];
    for (const file of DOCS) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\b(?:PROTOCOL|PRODUCT|TESTING|STYLE|DEVELOPERS)\.md\b/g))
        named.push(`${path.relative(REPO, file)}: ${m[0]}`);
      // Outside code: `docs/plan.md` in backticks is a path in someone's project, not a reference.
      const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
      for (const m of prose.matchAll(/\bdocs\/[\w-]+\.md\b/g))
        if (!existsSync(path.join(REPO, m[0]))) named.push(`${path.relative(REPO, file)}: ${m[0]}`);
    }
    assert.deepEqual(named, []);
  });

  it('the README opens with "Try it in two minutes": npm start and what it shows', () => {
    const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
    const sections = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    assert.equal(sections[0], 'Try it in two minutes');
    const first = readme.slice(readme.indexOf('## Try it in two minutes'), readme.indexOf(`## ${sections[1]}`));
    assert.match(first, /npm start/);
    assert.match(first, /Plan a Task/);
  });
});
