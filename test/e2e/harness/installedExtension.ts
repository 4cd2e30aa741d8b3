// Ultraplan as a person gets it: the .vsix of `npm run package`, installed by code-server's own
// `--install-extension`. Packaged and installed once per test process, into a folder of its own;
// each code-server the harness starts gets a copy of that installed extension folder. Set
// ULTRAPLAN_E2E_VSIX to a .vsix to install that one instead of packaging (scripts/test.mjs
// packages once for every e2e file it runs).
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { codeServerEntry, codeServerEnv, codeServerNode } from '../../../scripts/code-server-config.cjs';
import { REPO_ROOT } from './paths';

const run = promisify(execFile);

export const EXTENSION_ID = 'ultraplan.ultraplan';
export const VSIX_ENV = 'ULTRAPLAN_E2E_VSIX';

export interface InstalledExtension {
  /** The .vsix that was installed. */
  vsix: string;
  /** The installed extension's folder (code-server named it `<id>-<version>`). */
  folder: string;
}

let installed: Promise<InstalledExtension> | undefined;

/** The installed extension, packaged and installed on first use. */
export function installedExtension(): Promise<InstalledExtension> {
  installed ??= install();
  return installed;
}

/** Builds the .vsix with scripts/package.mjs; returns its path. */
export async function packageVsix(out: string): Promise<string> {
  const { stdout } = await run(process.execPath, [path.join(REPO_ROOT, 'scripts', 'package.mjs'), '--out', out], {
    cwd: REPO_ROOT,
    timeout: 180_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const written = stdout.trim().split('\n').at(-1) ?? '';
  if (!fs.existsSync(written)) throw new Error(`scripts/package.mjs wrote no .vsix (it printed ${JSON.stringify(stdout.slice(-500))})`);
  return written;
}

async function install(): Promise<InstalledExtension> {
  const root = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'ultraplan-e2e-installed-'));
  process.once('exit', () => fs.rmSync(root, { recursive: true, force: true }));
  const vsix = process.env[VSIX_ENV] || (await packageVsix(path.join(root, 'ultraplan.vsix')));
  if (!fs.existsSync(vsix)) throw new Error(`${VSIX_ENV}=${vsix}: no such file`);
  const extensionsDir = path.join(root, 'extensions');
  const args = [
    codeServerEntry(),
    '--install-extension',
    vsix,
    '--extensions-dir',
    extensionsDir,
    '--user-data-dir',
    path.join(root, 'user-data'),
  ];
  const env = { ...codeServerEnv(process.env), XDG_CONFIG_HOME: path.join(root, 'config') };
  let output: string;
  try {
    const { stdout, stderr } = await run(codeServerNode(), args, { env, timeout: 120_000 });
    output = `${stdout}${stderr}`;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`code-server --install-extension ${vsix} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
  }
  const folders = fs.readdirSync(extensionsDir).filter((name) => name.toLowerCase().startsWith(`${EXTENSION_ID}-`));
  if (folders.length !== 1)
    throw new Error(
      `code-server --install-extension left ${JSON.stringify(fs.readdirSync(extensionsDir))} in its extensions folder:\n${output}`,
    );
  return { vsix, folder: path.join(extensionsDir, folders[0]!) };
}
