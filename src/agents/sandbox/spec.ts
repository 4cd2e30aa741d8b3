// What one session's sandbox is made of. Parsed once where a session asks for an agent; every
// path is absolute so nothing depends on the service's working directory.
import path from 'node:path';
import * as z from 'zod';

const absolutePath = z
  .string()
  .min(1)
  .refine((value) => path.isAbsolute(value) && path.normalize(value) === value && value !== '/', {
    message: 'must be an absolute, normalized path other than /',
  });

/** An allow-list entry: `host`, `host:port`, `*.domain[:port]`, an IP literal, `[v6]:port`. */
const hostEntry = z.string().min(1).max(300);

/** An environment variable's name, as POSIX shells accept it. */
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);

/**
 * A model API key the agent never holds: it holds `standIn`, and addresses its model API over
 * plain http through the egress proxy, which puts `secret` where the stand-in is (headers and
 * query) on requests to that host and port only, and sends them on over TLS when `tls`.
 */
export const HeldKeySchema = z.object({
  standIn: z.string().regex(/^[A-Za-z0-9_-]{16,200}$/),
  secret: z.string().min(1).max(8192),
  host: z.string().min(1).max(253),
  /** The port the agent addresses, plain http, inside. */
  port: z.number().int().min(1).max(65535),
  upstreamPort: z.number().int().min(1).max(65535),
  tls: z.boolean(),
});
export type HeldKey = z.infer<typeof HeldKeySchema>;

export const SandboxSpecSchema = z.object({
  sessionId: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/),
  /** The only project folder the agent sees: read-only while planning, writable once approved. */
  workspace: absolutePath,
  mode: z.enum(['planning', 'executing']),
  /** The agent's own HOME (its login, caches, config): writable, seen by no other session. */
  home: absolutePath,
  /** The agent's own temp folder (TMPDIR); /tmp itself is a fresh, empty, private tmpfs. */
  tmp: absolutePath,
  /** Hosts the agent may reach through the egress proxy (its model's API), and nothing else. */
  allowedHosts: z.array(hostEntry).max(64),
  /** Lets an allowed name resolve into private ranges (an intranet model gateway). */
  allowPrivateNetwork: z.boolean().optional(),
  /** Folders the agent's program needs read-only (its install, node's prefix when outside /usr). */
  readOnlyPaths: z.array(absolutePath).max(64).optional(),
  /** Folders the operator shares with every agent, writable (a cache); never a session's own. */
  writablePaths: z.array(absolutePath).max(64).optional(),
  /** Files of the workspace unreadable inside (/dev/null bound over them, EACCES on a nodev mount): a reviewer's withheld files. */
  hiddenFiles: z.array(absolutePath).max(10_000).optional(),
  /** Folders of the workspace shown empty inside (a tmpfs over them): a reviewer's withheld folders (.git). */
  hiddenFolders: z.array(absolutePath).max(1_000).optional(),
  /** The person's login files of this agent (source), bound read-write at `target` below `home`. */
  loginFiles: z
    .array(z.object({ source: absolutePath, target: absolutePath }))
    .max(16)
    .optional(),
  /** Model API keys the proxy adds on the agent's behalf (the agent holds only stand-ins). */
  heldKeys: z.array(HeldKeySchema).max(16).optional(),
});
export type SandboxSpec = z.infer<typeof SandboxSpecSchema>;

/** The agent's environment: names copied from ours, and values the caller sets. */
export const SandboxEnvSchema = z.object({
  /** Copied from the service's environment when set (e.g. the agent's API key and base URL). */
  pass: z.array(envName).max(64).default([]),
  /** Set explicitly (e.g. CODEX_HOME inside the sandbox's HOME, IS_SANDBOX). */
  set: z.record(envName, z.string()).default({}),
});
export type SandboxEnv = z.input<typeof SandboxEnvSchema>;
