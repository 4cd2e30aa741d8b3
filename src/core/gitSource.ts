// Which git sources a session may name, on a server other people use too. A source is fetched by
// a worker on behalf of its session's owner, so it must not reach what the worker can but the
// owner should not: another session's folder (file://), a service inside the cluster (any host
// the operator did not allow), or be a way to store a password every reader of the session sees.
// Pure: no I/O; the worker checks the same rule again before it clones.

/** What a server allows (`--git-host`, `--allow-file-sources`). */
export interface GitSourcePolicy {
  /** Allowed hosts, `host` or `host:port`, lower case; `*` any host. Empty: none (no git source is fetched). */
  readonly hosts: readonly string[];
  /** file:// sources: only where one person uses the server (`--allow-file-sources`). */
  readonly allowFile: boolean;
}

export type GitSourceVerdict =
  | { ok: true; transport: 'https' | 'http' | 'ssh' | 'file'; host: string }
  | { ok: false; reason: 'not_a_url' | 'transport' | 'file' | 'credentials' | 'host'; message: string };

const SCP_LIKE = /^([A-Za-z0-9._-]+)@([A-Za-z0-9.-]+):(?!\/\/)(\S+)$/;
const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'https:': '443', 'http:': '80', 'ssh:': '22' };

/** The URL as it may be shown and logged: a password or token in it is left out. */
export function gitUrlWithoutCredentials(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, '$1');
}

function refused(reason: Extract<GitSourceVerdict, { ok: false }>['reason'], message: string): GitSourceVerdict {
  return { ok: false, reason, message };
}

function hostAllowed(policy: GitSourcePolicy, host: string, port: string): boolean {
  return policy.hosts.some((allowed) => allowed === '*' || allowed === host || allowed === `${host}:${port}`);
}

/** Whether a session may name this git URL under this policy, and why not. */
export function checkGitSource(url: string, policy: GitSourcePolicy): GitSourceVerdict {
  const shown = JSON.stringify(gitUrlWithoutCredentials(url).slice(0, 200));
  const scp = SCP_LIKE.exec(url);
  if (scp) {
    const host = (scp[2] as string).toLowerCase();
    if (!hostAllowed(policy, host, '22')) return refused('host', `the git host ${host} is not one this server fetches from`);
    return { ok: true, transport: 'ssh', host };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refused('not_a_url', `the git source ${shown} is not a repository URL (https://, ssh://, user@host:path)`);
  }
  const transport = parsed.protocol.slice(0, -1);
  if (transport === 'file') {
    if (!policy.allowFile)
      return refused(
        'file',
        `file:// sources are refused on a server other people use: it could read any folder its workers can (${shown})`,
      );
    return { ok: true, transport: 'file', host: '' };
  }
  if (transport !== 'https' && transport !== 'http' && transport !== 'ssh') {
    return refused('transport', `the git source ${shown} is not a repository URL this server fetches (https://, ssh://, user@host:path)`);
  }
  // A password or a token in the URL would be stored with the session and shown to all its readers.
  if (parsed.password !== '' || (transport !== 'ssh' && parsed.username !== '')) {
    return refused(
      'credentials',
      `the git source ${shown} carries credentials; the server keeps none in a session: give the workers access (a deploy key or a credential helper) instead`,
    );
  }
  const host = parsed.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const port = parsed.port || (DEFAULT_PORTS[parsed.protocol] as string);
  if (!hostAllowed(policy, host, port)) return refused('host', `the git host ${parsed.host} is not one this server fetches from`);
  return { ok: true, transport, host };
}
