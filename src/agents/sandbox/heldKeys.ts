// Model API keys an agent never holds. The service reads each key from a file (a mounted Secret);
// the agent gets a stand-in in the key's variable and its base-URL variable pointed at its model
// API over plain http, which in its sandbox only the egress proxy answers: the proxy puts the key
// in place of the stand-in on requests to that API alone and sends them on over TLS. What the agent
// can read (its environment, its files, /proc of its namespace) holds the stand-in, never the key.
import { randomBytes } from 'node:crypto';
import { KNOWN_AGENTS, knownAgentOfArgv } from '../catalogue/knownAgents';
import type { HeldKey } from './spec';

/** Every variable some known agent reads its key from. */
export function modelKeyNames(): string[] {
  return [...new Set(KNOWN_AGENTS.flatMap((agent) => agent.keyEnv))];
}

export interface HeldKeyPlan {
  /** Variables set in the agent's environment: each held key's stand-in, and its base URL. */
  set: Record<string, string>;
  keys: HeldKey[];
}

/**
 * The stand-ins and the proxy's keys for the agent `argv` runs (every known agent's, for a
 * command we do not know), given the keys the service holds by variable name and the base URL
 * the operator configured (`env`). Throws when a held key's agent has no base URL to point.
 */
export function heldKeyPlan(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  held: ReadonlyMap<string, string>,
): HeldKeyPlan {
  const plan: HeldKeyPlan = { set: {}, keys: [] };
  if (held.size === 0) return plan;
  const known = knownAgentOfArgv(argv);
  for (const agent of known ? [known] : KNOWN_AGENTS) {
    const names = agent.keyEnv.filter((name) => held.has(name) && plan.set[name] === undefined);
    if (names.length === 0) continue;
    const baseName = agent.baseUrlEnv[0];
    if (baseName === undefined) throw new Error(`${agent.label} reads no base URL, so its key cannot be held back from it.`);
    const configured = agent.baseUrlEnv.map((name) => env[name]).find((value) => value);
    const base = new URL(configured ?? `https://${(agent.modelHosts[0] as string).replace(/:443$/, '')}`);
    if (base.protocol !== 'https:' && base.protocol !== 'http:')
      throw new Error(`${baseName} must be an http(s) URL, got ${base.protocol}`);
    const tls = base.protocol === 'https:';
    const upstreamPort = base.port ? Number(base.port) : tls ? 443 : 80;
    const port = tls ? 80 : upstreamPort;
    const host = base.hostname.replace(/^\[|\]$/g, '');
    const pathname = base.pathname === '/' ? '' : base.pathname.replace(/\/$/, '');
    plan.set[baseName] = `http://${base.hostname}${port === 80 ? '' : `:${port}`}${pathname}`;
    for (const name of names) {
      const standIn = `ultraplan-held-key-${randomBytes(24).toString('hex')}`;
      plan.set[name] = standIn;
      plan.keys.push({ standIn, secret: held.get(name) as string, host, port, upstreamPort, tls });
    }
  }
  return plan;
}
