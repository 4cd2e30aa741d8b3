// Bundles the test runner extension and every in-host suite (test/e2e/host/**/*.host.ts) into
// test/e2e/runner-extension/out. `vscode` comes from the extension host and mocha from the
// repo's node_modules (found from the bundle's real path), so neither is bundled.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';

export const RUNNER_DIR = __dirname;
export const RUNNER_OUT = path.join(RUNNER_DIR, 'out');
const HOST_SUITES_DIR = path.resolve(RUNNER_DIR, '..', 'host');
const HOST_SUITE_SUFFIX = '.host.ts';

function findHostSuites(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return findHostSuites(full);
    return entry.name.endsWith(HOST_SUITE_SUFFIX) ? [full] : [];
  });
}

/** Suite name as ULTRAPLAN_TEST_SUITE takes it: path under test/e2e/host without `.host.ts`. */
export function hostSuiteName(file: string): string {
  return path.relative(HOST_SUITES_DIR, file).slice(0, -HOST_SUITE_SUFFIX.length).split(path.sep).join('/');
}

export async function buildRunnerExtension(): Promise<{ suites: string[] }> {
  const suiteFiles = findHostSuites(HOST_SUITES_DIR);
  const entryPoints: Record<string, string> = { runner: path.join(RUNNER_DIR, 'src', 'runner.ts') };
  for (const file of suiteFiles) entryPoints[`suites/${hostSuiteName(file)}`] = file;
  const result = await esbuild.build({
    entryPoints,
    write: false,
    outdir: RUNNER_OUT,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'linked',
    external: ['vscode', 'mocha'],
    logLevel: 'warning',
  });
  // Several test processes may build while an extension host loads a bundle: write each file
  // under a temporary name and rename it, so a reader never sees half a file.
  for (const file of result.outputFiles) {
    fs.mkdirSync(path.dirname(file.path), { recursive: true });
    const temp = `${file.path}.${process.pid}.tmp`;
    fs.writeFileSync(temp, file.contents);
    fs.renameSync(temp, file.path);
  }
  return { suites: suiteFiles.map(hostSuiteName) };
}

if (require.main === module) {
  buildRunnerExtension().then(
    ({ suites }) => console.log(`[runner-extension] built runner and ${suites.length} in-host suite(s): ${suites.join(', ') || '(none)'}`),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
