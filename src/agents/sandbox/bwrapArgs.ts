// The bubblewrap command line for one session's agent. Everything the agent may see is named
// here; what is not named does not exist inside (the root is an empty tmpfs): no other session's
// folders, no service state, no host /proc, no network but loopback and the proxy's socket.
import path from 'node:path';
import { isInside } from '../../core/node/realPaths';
import type { SandboxSpec } from './spec';

/** The host's system folders, as the sandbox shows them (read-only). */
export interface HostLayout {
  /** Bound read-only at the same path: /usr, the dynamic loader's folders, a few /etc entries. */
  readOnly: readonly string[];
  /** Symbolic links recreated inside (merged-/usr systems: /bin -> usr/bin). */
  symlinks: ReadonlyArray<{ path: string; target: string }>;
  /** bubblewrap 0.8.0+: the agent cannot make user namespaces (its way to undo our mounts). */
  disableUserns: boolean;
  /** socat inside the sandbox, bridging the proxy's socket to a loopback port. */
  socat: string;
}

/** Where the egress proxy's socket appears inside, and the loopback port the bridge serves. */
export const PROXY_SOCKET_INSIDE = '/run/ultraplan/egress.sock';
export const PROXY_PORT_INSIDE = 3128;
/** Exit status of the wrapper when the bridge to the proxy never started. */
export const BRIDGE_FAILED_STATUS = 97;

/**
 * Waits for socat to listen (its port in this namespace's /proc/net/tcp, state 0A) so the agent's
 * first request cannot race it, then becomes the agent.
 */
function bridgeScript(socat: string): string {
  const hexPort = PROXY_PORT_INSIDE.toString(16).toUpperCase().padStart(4, '0');
  return [
    `${socat} TCP-LISTEN:${PROXY_PORT_INSIDE},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${PROXY_SOCKET_INSIDE} 2>/dev/null &`,
    'i=0',
    `until grep -q ':${hexPort} 00000000:0000 0A' /proc/net/tcp; do`,
    '  i=$((i+1))',
    `  if [ "$i" -gt 500 ]; then echo 'sandbox: the egress bridge did not start' >&2; exit ${BRIDGE_FAILED_STATUS}; fi`,
    '  sleep 0.01',
    'done',
    'exec "$@"',
  ].join('\n');
}

/**
 * bubblewrap's arguments (after the program name) to run `argv` in `spec`'s sandbox.
 * `proxySocket` is the host path of the session's egress proxy, or undefined for no network.
 */
export function bwrapArguments(spec: SandboxSpec, layout: HostLayout, proxySocket: string | undefined, argv: readonly string[]): string[] {
  if (argv.length === 0 || !argv[0]) throw new Error('The agent command is empty.');
  const sessionPaths = [spec.workspace, spec.home, spec.tmp];
  for (const extra of [...(spec.readOnlyPaths ?? []), ...(spec.writablePaths ?? [])]) {
    const covered = sessionPaths.find((own) => isInside(extra, own));
    if (covered) throw new Error(`readOnlyPaths entry ${extra} would show ${covered} and what lies beside it`);
  }
  const program = argv[0];
  if (path.isAbsolute(program)) {
    const visible = [
      ...layout.readOnly,
      ...(spec.readOnlyPaths ?? []),
      ...(spec.writablePaths ?? []),
      ...sessionPaths,
      ...layout.symlinks.map((link) => link.path),
    ];
    if (!visible.some((root) => isInside(root, program))) {
      throw new Error(`The agent program ${program} is not visible in the sandbox: add its folder to readOnlyPaths.`);
    }
  }

  const args = [
    '--unshare-all',
    ...(layout.disableUserns ? ['--unshare-user', '--disable-userns'] : []),
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--hostname',
    'sandbox',
  ];
  for (const link of layout.symlinks) args.push('--symlink', link.target, link.path);
  for (const dir of layout.readOnly) args.push('--ro-bind', dir, dir);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');

  // Parents before children: a later mount over a parent would hide an earlier child.
  const mounts: Array<{ flag: '--ro-bind' | '--bind'; dir: string }> = [
    ...(spec.readOnlyPaths ?? []).map((dir) => ({ flag: '--ro-bind' as const, dir })),
    ...(spec.writablePaths ?? []).map((dir) => ({ flag: '--bind' as const, dir })),
    { flag: '--bind', dir: spec.home },
    { flag: '--bind', dir: spec.tmp },
    { flag: spec.mode === 'executing' ? '--bind' : '--ro-bind', dir: spec.workspace },
  ];
  mounts.sort((a, b) => a.dir.split(path.sep).length - b.dir.split(path.sep).length);
  for (const mount of mounts) args.push(mount.flag, mount.dir, mount.dir);
  // Over the HOME's mount, each one file (bubblewrap makes its mount point there).
  for (const login of spec.loginFiles ?? []) {
    if (!isInside(spec.home, login.target) || login.target === spec.home)
      throw new Error(`Login file target ${login.target} is not inside the sandbox's HOME`);
    args.push('--bind', login.source, login.target);
  }
  // Over the workspace's mount, so they cover what it shows; only inside the workspace.
  for (const hidden of [...(spec.hiddenFiles ?? []), ...(spec.hiddenFolders ?? [])])
    if (!isInside(spec.workspace, hidden) || hidden === spec.workspace)
      throw new Error(`Hidden path ${hidden} is not inside the workspace`);
  for (const folder of spec.hiddenFolders ?? []) args.push('--tmpfs', folder);
  for (const file of spec.hiddenFiles ?? []) args.push('--ro-bind', '/dev/null', file);

  if (proxySocket) args.push('--bind', proxySocket, PROXY_SOCKET_INSIDE);
  args.push('--chdir', spec.workspace, '--');
  if (proxySocket) args.push('/bin/sh', '-c', bridgeScript(layout.socat), 'ultraplan-sandbox');
  args.push(...argv);
  return args;
}
