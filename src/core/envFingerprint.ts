// A fingerprint of the environment a local service's agents run with (docs/service.md, "Windows
// with another environment"): a SHA-256 per variable and one over them all, salted, never the
// values. The service publishes its own in `/v1/service`; a window computes its own with the
// service's salt and names the variables that differ. Pure: WebCrypto, which Node and the
// extension host both have.
import * as z from 'zod';

/** Read by every agent whatever it is: where programs are found, whose HOME, the proxies. */
export const BASE_AGENT_ENV_NAMES: readonly string[] = [
  'PATH',
  'HOME',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
];

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);

export const EnvFingerprintSchema = z.strictObject({
  /** Random per service start, so a hash seen elsewhere cannot be matched against a guessed value. */
  salt: z.string().regex(/^[0-9a-f]{32}$/),
  /** Over every variable's hash, sorted by name: equal exactly when every variable is. */
  sha256: hex64,
  /** One hash per variable that is set; an unset one is absent. */
  variables: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), hex64),
});
export type EnvFingerprint = z.infer<typeof EnvFingerprintSchema>;

export function randomSalt(): string {
  return toHex(globalThis.crypto.getRandomValues(new Uint8Array(16)));
}

export async function envFingerprint(
  env: Readonly<Record<string, string | undefined>>,
  names: readonly string[],
  salt: string,
): Promise<EnvFingerprint> {
  const variables: Record<string, string> = {};
  for (const name of [...new Set(names)].sort()) {
    const value = env[name];
    if (value !== undefined) variables[name] = await sha256(`${salt}\0${name}\0${value}`);
  }
  const all = Object.entries(variables).map(([name, hash]) => `${name}\0${hash}\n`);
  return { salt, variables, sha256: await sha256(`${salt}\0${all.join('')}`) };
}

/** The names whose values differ (set in one and not the other included), sorted. */
export function envDifferences(a: EnvFingerprint, b: EnvFingerprint): string[] {
  if (a.sha256 === b.sha256 && a.salt === b.salt) return [];
  const names = new Set([...Object.keys(a.variables), ...Object.keys(b.variables)]);
  return [...names].filter((name) => a.variables[name] !== b.variables[name]).sort();
}

async function sha256(text: string): Promise<string> {
  return toHex(new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))));
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
