// The README and docs/ as a newcomer reads them: every document they link or name is in the
// repository, every source path and symbol docs/architecture.md names is in the code, and the
// README opens with how to try it.
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

const ARCHITECTURE = path.join(REPO, 'docs', 'architecture.md');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)],
  );
}

/**
 * The paths docs/architecture.md names, in backticks or in its diagrams: `src/core/phase.ts`,
 * `core/phase.ts` (under src/), `review/reviewPanel.ts` (under src/extension/), `commands/`.
 */
function architecturePaths(text: string): string[] {
  const pathLike = /(?<![\w/.<-])((?:[\w-]+\/)+(?:[\w.-]*\.(?:ts|mjs|js|json|md))?)(?![\w/<>])/g;
  return [...new Set([...text.matchAll(pathLike)].map((m) => m[1]!))].filter((p) => !p.startsWith('/'));
}

/** Where a path named in docs/architecture.md may be: from the repository, or from one of the rooms. */
function architecturePathExists(named: string): boolean {
  // Build outputs are named by the entry that makes them (esbuild.mjs), not found on disk before a build.
  const built = /^dist\/(?:(chunks)\/|([\w-]+)\.(?:m?js))$/.exec(named);
  if (built) return readFileSync(path.join(REPO, 'esbuild.mjs'), 'utf8').includes(built[1] ?? `${built[2]}:`) || built[2] === 'webview';
  return ['', 'src', 'src/extension', 'src/client', 'src/service', 'src/agents'].some((base) => existsSync(path.join(REPO, base, named)));
}

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

  it('docs/architecture.md names only paths that exist', () => {
    const missing = architecturePaths(readFileSync(ARCHITECTURE, 'utf8')).filter((named) => !architecturePathExists(named));
    assert.deepEqual(missing, []);
  });

  it('docs/architecture.md names only symbols that are in the code (`FollowedSessions.#onSnapshot`: both parts)', () => {
    const code = [...filesUnder(path.join(REPO, 'src')), ...filesUnder(path.join(REPO, 'test', 'support'))]
      .filter((f) => /\.(?:ts|json)$/.test(f))
      .map((f) => readFileSync(f, 'utf8'))
      .concat(readFileSync(path.join(REPO, 'package.json'), 'utf8'), readFileSync(path.join(REPO, 'esbuild.mjs'), 'utf8'))
      .join('\n');
    const prose = readFileSync(ARCHITECTURE, 'utf8').replace(/```[\s\S]*?```/g, '');
    const missing: string[] = [];
    for (const [, named] of prose.matchAll(/`([A-Za-z_#$][\w#$]*(?:\.[\w#$]+)*)(?:\(\))?`/g)) {
      if (/\.(?:ts|mjs|js|json|md)$/.test(named!)) continue;
      for (const part of named!.split('.')) {
        const word = new RegExp(`(?<![\\w#$])${part.replace(/[#$]/g, '\\$&')}(?![\\w$])`);
        if (!word.test(code)) missing.push(`${named} (${part})`);
      }
    }
    assert.deepEqual(missing, []);
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
