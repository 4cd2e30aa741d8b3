// Can this machine give each agent a sandbox of its own? Linux with bubblewrap and socat, and
// user namespaces that actually work here (a container or a kernel setting can forbid them): the
// probe runs a real sandbox once rather than trusting that the binaries exist.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { findBubblewrap, programOnPath } from '../../core/node/bubblewrap';
import type { HostLayout } from './bwrapArgs';

export { privateBwrap } from '../../core/node/bubblewrap';

export interface SandboxTools {
  bwrap: string;
  bwrapVersion: string;
  layout: HostLayout;
}

export type SandboxSupport = { supported: true; tools: SandboxTools; notes: string[] } | { supported: false; reason: string };

/** For a person's machine and for a clone of Ultraplan alike. */
const INSTALL_HINT =
  "Install your distribution's bubblewrap and socat packages (e.g. sudo apt-get install bubblewrap socat); in a clone of Ultraplan, npm run setup unpacks bubblewrap and installs socat.";

/** System folders an agent's programs need, when the host has them. */
const SYSTEM_ROOTS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** What of /etc a program needs to start, resolve users and verify TLS; nothing else of /etc. */
const ETC_ENTRIES = [
  '/etc/alternatives',
  '/etc/ca-certificates',
  '/etc/ssl',
  '/etc/pki',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/nsswitch.conf',
  '/etc/passwd',
  '/etc/group',
  '/etc/hosts',
];

/** The host's system folders as the sandbox will show them. */
export function hostLayout(socat: string, disableUserns: boolean): HostLayout {
  const readOnly: string[] = [];
  const symlinks: Array<{ path: string; target: string }> = [];
  for (const root of [...SYSTEM_ROOTS, ...ETC_ENTRIES]) {
    let stat;
    try {
      stat = lstatSync(root);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink() && SYSTEM_ROOTS.includes(root)) symlinks.push({ path: root, target: readlinkSync(root) });
    else readOnly.push(root);
  }
  return { readOnly, symlinks, disableUserns, socat };
}

function refusalFor(platform: NodeJS.Platform): string {
  if (platform === 'darwin') {
    return 'macOS: agents cannot be sandboxed here (the sandbox uses bubblewrap, which is Linux only); they run with your own permissions.';
  }
  if (platform === 'win32') {
    return 'Windows: agents cannot be sandboxed here (the sandbox uses bubblewrap, which is Linux only); they run with your own permissions.';
  }
  return `${platform}: agents cannot be sandboxed here (the sandbox uses bubblewrap, which is Linux only).`;
}

/**
 * `bwrapPath`: the bubblewrap to run, as the process that started this one found it (the
 * extension, for its local service); else PATH's, else the one the setup unpacked.
 */
export function sandboxSupport(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  bwrapPath?: string,
): SandboxSupport {
  if (platform !== 'linux') return { supported: false, reason: refusalFor(platform) };
  if (bwrapPath !== undefined && !(path.isAbsolute(bwrapPath) && existsSync(bwrapPath))) {
    return { supported: false, reason: `bubblewrap (bwrap) is not at ${bwrapPath}. ${INSTALL_HINT}` };
  }
  const bwrap = bwrapPath ?? findBubblewrap(env);
  const socat = programOnPath('socat', env);
  const missing = [bwrap ? undefined : 'bubblewrap (bwrap)', socat ? undefined : 'socat'].filter(Boolean);
  if (!bwrap || !socat) {
    return { supported: false, reason: `Missing ${missing.join(' and ')}. ${INSTALL_HINT}` };
  }
  const version = spawnSync(bwrap, ['--version'], { encoding: 'utf8', timeout: 5000 });
  const bwrapVersion = /(\d+\.\d+(?:\.\d+)?)/.exec(version.stdout ?? '')?.[1] ?? 'unknown';
  const help = spawnSync(bwrap, ['--help'], { encoding: 'utf8', timeout: 5000 });
  const disableUserns = `${help.stdout ?? ''}${help.stderr ?? ''}`.includes('--disable-userns');
  const layout = hostLayout(socat, disableUserns);
  const socatVisible = layout.readOnly.some((root) => socat === root || socat.startsWith(`${root}/`));
  if (!socatVisible) return { supported: false, reason: `socat at ${socat} lies outside the system folders a sandbox shows.` };

  // A real sandbox with every namespace: this is what fails under a container or kernel policy.
  const trial = spawnSync(
    bwrap,
    ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', 'true'],
    { encoding: 'utf8', timeout: 10_000 },
  );
  if (trial.error || trial.status !== 0) {
    const detail = (trial.stderr ?? '').trim() || trial.error?.message || `exit ${trial.status ?? trial.signal}`;
    return {
      supported: false,
      reason: `bubblewrap cannot create namespaces here (${detail}). User namespaces are off or forbidden (kernel.unprivileged_userns_clone, kernel.apparmor_restrict_unprivileged_userns, or a container's seccomp profile).`,
    };
  }
  const notes = disableUserns
    ? []
    : [`bubblewrap ${bwrapVersion} has no --disable-userns (0.8.0+): an agent could make nested user namespaces.`];
  return { supported: true, tools: { bwrap, bwrapVersion, layout }, notes };
}

/** Why a service serving several people must not start on this machine, or undefined when it may. */
export function multiUserRefusal(support: SandboxSupport): string | undefined {
  if (support.supported) return undefined;
  return `Multi-user mode needs a sandbox per agent, and this machine has none: ${support.reason}`;
}
