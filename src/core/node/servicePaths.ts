// Where the local session service lives for this user: a private runtime folder for the socket
// and the token, and a private state folder for the sessions and the logs (docs/service.md).
// Every name that a second version of the service could clash on carries the version.
import * as os from 'node:os';
import * as path from 'node:path';

/** Overrides both folders (tests, or a person who wants the service elsewhere). */
export const SERVICE_DIR_ENV = 'ULTRAPLAN_SERVICE_DIR';

/** The longest Unix socket path the kernel takes (sun_path is 108 bytes on Linux, 104 on macOS). */
const MAX_SOCKET_PATH = 100;

export interface ServicePaths {
  /** Sockets and the token: private to the user (0700). */
  readonly runtimeDir: string;
  /** Session journals and logs: private to the user (0700), kept across reboots. */
  readonly stateDir: string;
  /** The bearer token every client sends (0600), shared by every version. */
  readonly tokenFile: string;
  /** On Windows, named pipes share one namespace, so their names carry the user. */
  readonly pipePrefix: string | null;
}

export interface ServicePlace {
  readonly paths: ServicePaths;
  readonly version: string;
  /** The Unix socket (or Windows named pipe) this version listens on. */
  readonly socket: string;
  readonly dataDir: string;
  readonly logFile: string;
}

/** Versions become file names: anything outside [A-Za-z0-9._+-] is refused rather than mangled. */
export function checkServiceVersion(version: string): string {
  if (!/^[A-Za-z0-9._+-]{1,64}$/.test(version) || version.startsWith('.')) {
    throw new Error(`service version ${JSON.stringify(version)} cannot name a file; use letters, digits, . _ + -`);
  }
  return version;
}

export interface ServicePathsEnvironment {
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  uid?: number;
  home?: string;
  tmpdir?: string;
  userName?: string;
}

export function servicePaths(environment: ServicePathsEnvironment = {}): ServicePaths {
  const env = environment.env ?? process.env;
  const platform = environment.platform ?? process.platform;
  const home = environment.home ?? os.homedir();
  const tmp = environment.tmpdir ?? os.tmpdir();
  const p = platform === 'win32' ? path.win32 : path.posix;
  const override = env[SERVICE_DIR_ENV]?.trim();
  if (platform === 'win32') {
    const base = override || p.join(env.LOCALAPPDATA || p.join(home, 'AppData', 'Local'), 'Ultraplan', 'service');
    const user = (environment.userName ?? safeUserName()).replace(/[^A-Za-z0-9._-]/g, '_');
    return {
      runtimeDir: base,
      stateDir: base,
      tokenFile: p.join(base, 'token'),
      pipePrefix: `\\\\.\\pipe\\ultraplan-${user}-${shortHash(base)}-`,
    };
  }
  if (override) {
    return {
      runtimeDir: p.join(override, 'run'),
      stateDir: p.join(override, 'state'),
      tokenFile: p.join(override, 'run', 'token'),
      pipePrefix: null,
    };
  }
  const uid = environment.uid ?? process.getuid?.() ?? 0;
  const xdgRuntime = env.XDG_RUNTIME_DIR?.trim();
  // /run/user/<uid> is made private by the system; a shared /tmp is checked by ensurePrivateDir.
  const runtimeDir = xdgRuntime && p.isAbsolute(xdgRuntime) ? p.join(xdgRuntime, 'ultraplan') : p.join(tmp, `ultraplan-${uid}`);
  const stateHome =
    platform === 'darwin'
      ? p.join(home, 'Library', 'Application Support')
      : env.XDG_STATE_HOME?.trim() && p.isAbsolute(env.XDG_STATE_HOME.trim())
        ? env.XDG_STATE_HOME.trim()
        : p.join(home, '.local', 'state');
  return { runtimeDir, stateDir: p.join(stateHome, 'ultraplan', 'service'), tokenFile: p.join(runtimeDir, 'token'), pipePrefix: null };
}

export function servicePlace(paths: ServicePaths, version: string): ServicePlace {
  checkServiceVersion(version);
  const p = paths.pipePrefix ? path.win32 : path.posix;
  const socket = paths.pipePrefix ? `${paths.pipePrefix}${version}` : p.join(paths.runtimeDir, `service-${version}.sock`);
  if (!paths.pipePrefix && Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    throw new Error(`the service socket path ${socket} is too long for a Unix socket; set ${SERVICE_DIR_ENV} to a shorter folder`);
  }
  return {
    paths,
    version,
    socket,
    dataDir: p.join(paths.stateDir, `data-${version}`),
    logFile: p.join(paths.stateDir, `service-${version}.log`),
  };
}

/**
 * Orders versions as releases are numbered (1.10.0 after 1.9.2): dot-separated parts compared as
 * numbers where both are numbers, else as text; a version with a pre-release tag (1.0.0-rc.1)
 * comes before the release.
 */
export function compareVersions(a: string, b: string): number {
  const [mainA = '', preA] = a.split(/-(.*)/s);
  const [mainB = '', preB] = b.split(/-(.*)/s);
  const partsA = mainA.split('.');
  const partsB = mainB.split('.');
  for (let i = 0; i < Math.max(partsA.length, partsB.length); i++) {
    const x = partsA[i] ?? '0';
    const y = partsB[i] ?? '0';
    const order = /^\d+$/.test(x) && /^\d+$/.test(y) ? Number(x) - Number(y) : x.localeCompare(y);
    if (order !== 0) return Math.sign(order);
  }
  if (preA === undefined || preB === undefined) return preA === preB ? 0 : preA === undefined ? 1 : -1;
  return Math.sign(preA.localeCompare(preB));
}

/** The version a data folder belongs to (`data-<version>`), or null for any other name. */
export function versionOfDataDir(name: string): string | null {
  const match = /^data-([A-Za-z0-9._+-]{1,64})$/.exec(name);
  return match && !(match[1] as string).startsWith('.') ? (match[1] as string) : null;
}

function safeUserName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return 'user';
  }
}

function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16);
}
