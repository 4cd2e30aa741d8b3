// Installing a known agent's npm package for a person: the Node.js it needs, the install itself
// with progress, and a failure that names its cause and the fix.
import { spawn } from 'node:child_process';
import type { KnownAgent } from './knownAgents';

/** Whether `version` (process.version, "v22.3.0") satisfies an `engines.node` range of the form ">=N[.M]". */
export function nodeSatisfies(version: string, range: string): boolean {
  const wanted = /^>=\s*(\d+)(?:\.(\d+))?/.exec(range.trim());
  const have = /^v?(\d+)\.(\d+)/.exec(version.trim());
  if (!wanted || !have) return true;
  const [major, minor] = [Number(have[1]), Number(have[2])];
  const [needMajor, needMinor] = [Number(wanted[1]), Number(wanted[2] ?? 0)];
  return major > needMajor || (major === needMajor && minor >= needMinor);
}

/** The Node.js problem before installing, if any: none found, or too old for the package. */
export function nodeProblem(agent: KnownAgent, nodeVersion: string | undefined): string | undefined {
  if (!nodeVersion) {
    return `${agent.label} needs Node.js ${agent.pkg.node} with npm, and no \`node\` was found on PATH. Install Node.js (https://nodejs.org) and try again.`;
  }
  if (!nodeSatisfies(nodeVersion, agent.pkg.node)) {
    return `${agent.label} needs Node.js ${agent.pkg.node}, but \`node\` on PATH is ${nodeVersion}. Install a newer Node.js (https://nodejs.org, or nvm install ${/\d+/.exec(agent.pkg.node)?.[0] ?? 'node'}) and try again.`;
  }
  return undefined;
}

/** A failed install explained: what went wrong and what to do, from npm's own output. */
export function describeInstallFailure(agent: KnownAgent, output: string, exit: { code: number | null; spawnError?: string }): string {
  const command = agent.installCommand;
  if (exit.spawnError) {
    return `Could not run npm (${exit.spawnError}): Node.js ${agent.pkg.node} with npm is needed to install ${agent.label}. Install Node.js (https://nodejs.org), then run: ${command}`;
  }
  if (/EACCES|permission denied/i.test(output)) {
    return (
      `npm may not write to its global folder (permission denied). Install without sudo by giving npm a folder of your own ` +
      `(npm config set prefix ~/.npm-global, and add ~/.npm-global/bin to PATH) or use a Node version manager, then run: ${command}`
    );
  }
  if (/ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|network/i.test(output)) {
    return `npm could not reach its registry (network). Check the connection or npm's proxy settings (npm config get registry), then run: ${command}`;
  }
  if (/E404|404 Not Found|No matching version|ETARGET/i.test(output)) {
    return `The registry has no ${agent.pkg.package}@${agent.pkg.version} (npm config get registry shows which registry is used). Run: ${command}`;
  }
  if (/EBADENGINE|Unsupported engine/i.test(output)) {
    return `${agent.pkg.package}@${agent.pkg.version} needs Node.js ${agent.pkg.node}. Install a newer Node.js, then run: ${command}`;
  }
  const last = output.trim().split('\n').filter(Boolean).slice(-5).join('\n');
  return `${command} failed (exit code ${exit.code ?? '?'}). Run it in a terminal to see why.${last ? `\nnpm said:\n${last}` : ''}`;
}

export interface InstallOptions {
  /** The npm program (default `npm`). */
  npm?: string;
  env?: NodeJS.ProcessEnv;
  /** Each step npm reports ("fetched 12 packages", "added 25 packages"). */
  onProgress?: (message: string) => void;
  signal?: AbortSignal;
}

export type InstallResult = { ok: true } | { ok: false; message: string };

/** Runs the agent's install command (npm install -g pkg@version), reporting progress as npm fetches. */
export function installAgent(agent: KnownAgent, options: InstallOptions = {}): Promise<InstallResult> {
  const args = ['install', '-g', `${agent.pkg.package}@${agent.pkg.version}`, '--no-audit', '--no-fund', '--loglevel', 'http'];
  return runNpm(
    agent,
    args,
    `The install was cancelled; ${agent.pkg.package} may be partly installed. Run it again: ${agent.installCommand}`,
    options,
  );
}

/**
 * Puts the pinned package in npx's own cache, with progress, so that the agent's `npx -y
 * pkg@version` then starts at once: without it, a first session sat silent for the whole
 * download. `npm exec` fills the same cache npx reads; the command it runs (`node -e 0`) does nothing.
 */
export function fetchAgentForNpx(agent: KnownAgent, options: InstallOptions = {}): Promise<InstallResult> {
  const args = ['exec', '--yes', `--package=${agent.pkg.package}@${agent.pkg.version}`, '--loglevel', 'http', '--', 'node', '-e', '0'];
  return runNpm(agent, args, `The download of ${agent.pkg.package}@${agent.pkg.version} was cancelled; nothing was started.`, options);
}

function runNpm(agent: KnownAgent, args: string[], cancelled: string, options: InstallOptions): Promise<InstallResult> {
  return new Promise((resolve) => {
    let output = '';
    let fetched = 0;
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(options.npm ?? 'npm', args, {
        env: options.env ?? process.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        shell: process.platform === 'win32',
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      resolve({ ok: false, message: describeInstallFailure(agent, '', { code: null, spawnError: String(error) }) });
      return;
    }
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      output = (output + text).slice(-20_000);
      for (const line of text.split('\n')) {
        if (/\bhttp fetch GET 200\b/.test(line)) {
          fetched += 1;
          if (fetched === 1 || fetched % 5 === 0) options.onProgress?.(`downloaded ${fetched} package${fetched === 1 ? '' : 's'}`);
        } else if (/^added \d+ packages?/.test(line.trim()) || /^changed \d+ packages?/.test(line.trim())) {
          options.onProgress?.(line.trim());
        }
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    let spawnError: string | undefined;
    child.on('error', (error) => {
      spawnError = error.message;
    });
    child.on('close', (code) => {
      if (options.signal?.aborted) resolve({ ok: false, message: cancelled });
      else if (code === 0 && !spawnError) resolve({ ok: true });
      else resolve({ ok: false, message: describeInstallFailure(agent, output, { code, ...(spawnError ? { spawnError } : {}) }) });
    });
  });
}
