// `npm run package`: what the .vsix holds and that Open VSX's own reader takes it. The real
// package is built (scripts/package.mjs, production bundles in a staging folder) into a temp dir.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { PackageManager, listFiles } from '@vscode/vsce';
import { readVSIXPackage } from 'ovsx/lib/zip';

const run = promisify(execFile);
const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** Everything the installed extension loads (docs/packaging.md), and nothing else, besides the chunks. */
const EXPECTED = [
  'CHANGELOG.md',
  'LICENSE',
  'README.md',
  'dist/bootstrap.js',
  'dist/codicon.ttf',
  'dist/extension.mjs',
  'dist/server.mjs',
  'dist/webview.css',
  'dist/webview.js',
  'examples/demo.json',
  'media/icon.png',
  'media/inbox.svg',
  'media/walkthrough/agent.md',
  'media/walkthrough/backend.md',
  'media/walkthrough/plan.md',
  'media/walkthrough/review.md',
  'package.json',
];

describe('npm run package: the .vsix', function () {
  this.timeout(180_000);
  let dir = '';
  let vsix = '';

  before(async () => {
    dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'ultraplan-package-test-'));
    const { stdout } = await run(process.execPath, [path.join(REPO_ROOT, 'scripts', 'package.mjs'), '--out', path.join(dir, 'u.vsix')], {
      cwd: REPO_ROOT,
      maxBuffer: 16 << 20,
    });
    vsix = stdout.trim().split('\n').at(-1) ?? '';
  });
  after(async () => {
    if (dir) await fs.promises.rm(dir, { recursive: true, force: true });
  });

  it('lists only what the installed extension loads (vsce ls)', async () => {
    const files = (await listFiles({ cwd: REPO_ROOT, packageManager: PackageManager.None })).map((f) => f.split(path.sep).join('/')).sort();
    // The chunks of the extension's module graph are named by esbuild (a content hash): all of the
    // build's, and no source map.
    const chunks = fs
      .readdirSync(path.join(REPO_ROOT, 'dist', 'chunks'))
      .filter((name) => name.endsWith('.mjs'))
      .map((name) => `dist/chunks/${name}`);
    assert.ok(chunks.length > 0, 'the build wrote no chunk');
    assert.deepEqual(files, [...EXPECTED, ...chunks].sort());
  });

  it("is read by Open VSX's ovsx as it is: publisher, name, version, MIT licence, repository, main", async () => {
    assert.ok(fs.existsSync(vsix), `no .vsix at ${vsix}`);
    const manifest = (await readVSIXPackage(vsix)) as unknown as Record<string, unknown>;
    assert.equal(manifest.publisher, 'ultraplan');
    assert.equal(manifest.name, 'ultraplan');
    assert.match(String(manifest.version), /^\d+\.\d+\.\d+$/);
    assert.equal(manifest.license, 'MIT');
    assert.match(JSON.stringify(manifest.repository), /^\{"type":"git","url":"https:\/\/github\.com\//);
    assert.equal(manifest.main, './dist/bootstrap.js');
    assert.equal(manifest.icon, 'media/icon.png');
  });
});
