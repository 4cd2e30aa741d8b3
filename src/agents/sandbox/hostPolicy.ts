// Which destinations a sandboxed agent may reach through its egress proxy. An allowed NAME must
// also resolve somewhere harmless: loopback, link-local (the cloud metadata address), multicast
// and this host's own addresses never, private ranges only when the session allows them. An IP
// literal in the list is an explicit choice (the tests' model API on 127.0.0.1:PORT) and is
// reached as listed, but a non-public literal must name its port.
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

export interface HostRule {
  /** Lower case, without brackets; for a wildcard, the suffix after `*.`. */
  host: string;
  wildcard: boolean;
  port: number | undefined;
  /** 4 or 6 for an IP literal, 0 for a name. */
  ipVersion: 0 | 4 | 6;
}

export interface EgressPolicy {
  rules: readonly HostRule[];
  allowPrivateNetwork: boolean;
}

export type TargetVerdict = { allowed: true; literal: boolean } | { allowed: false; reason: string };

function block(entries: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']>): BlockList {
  const list = new BlockList();
  for (const [address, prefix, family] of entries) list.addSubnet(address, prefix, family);
  return list;
}

/** Never reached through a name, whatever the flags. */
const ALWAYS_DENIED: ReadonlyArray<readonly [string, BlockList]> = [
  [
    'loopback',
    block([
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ]),
  ],
  [
    'unspecified',
    block([
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ]),
  ],
  [
    'multicast or broadcast',
    block([
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ]),
  ],
];

/** The metadata address lives here; lifted only by allowPrivateNetwork on a listed literal. */
const LINK_LOCAL_OR_METADATA = block([
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
  // Cloud platform endpoints outside link-local (Alibaba, Azure, Oracle, AWS IPv6).
  ['100.100.100.200', 32, 'ipv4'],
  ['168.63.129.16', 32, 'ipv4'],
  ['192.0.0.192', 32, 'ipv4'],
  ['fd00:ec2::254', 128, 'ipv6'],
]);

const PRIVATE = block([
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['fc00::', 7, 'ipv6'],
]);

function familyOf(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

/** `::ffff:10.0.0.1` is judged as `10.0.0.1`. */
function unmapped(address: string): string {
  const match = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return match?.[1] ?? address.toLowerCase();
}

function ownAddresses(): Set<string> {
  const own = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const info of list ?? []) own.add(unmapped(info.address));
  return own;
}

/** Why `address` is out of reach for a destination reached by name, or undefined when it is fine. */
export function addressDenial(address: string, allowPrivateNetwork: boolean): string | undefined {
  const ip = unmapped(address);
  const family = familyOf(ip);
  for (const [name, list] of ALWAYS_DENIED) if (list.check(ip, family)) return name;
  if (LINK_LOCAL_OR_METADATA.check(ip, family)) return 'link-local or cloud metadata';
  if (ownAddresses().has(ip)) return "one of this host's own addresses";
  if (!allowPrivateNetwork && PRIVATE.check(ip, family)) return 'a private range';
  return undefined;
}

function isPublicLiteral(address: string): boolean {
  const ip = unmapped(address);
  const family = familyOf(ip);
  return (
    !ALWAYS_DENIED.some(([, list]) => list.check(ip, family)) &&
    !LINK_LOCAL_OR_METADATA.check(ip, family) &&
    !PRIVATE.check(ip, family) &&
    !ownAddresses().has(ip)
  );
}

/** Splits `host:port`, `[v6]:port`, a bare v6 literal or a bare host. */
export function splitHostPort(value: string): { host: string; port: number | undefined } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) return { host: bracketed[1] ?? '', port: bracketed[2] === undefined ? undefined : Number(bracketed[2]) };
  if (isIP(value) === 6) return { host: value, port: undefined };
  const colon = value.lastIndexOf(':');
  if (colon < 0) return { host: value, port: undefined };
  const portText = value.slice(colon + 1);
  if (!/^\d+$/.test(portText)) throw new Error(`"${value}" has a port that is not a number`);
  return { host: value.slice(0, colon), port: Number(portText) };
}

function normalHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

export function parseHostRule(entry: string): HostRule {
  const { host: rawHost, port } = splitHostPort(entry.trim());
  if (port !== undefined && (port < 1 || port > 65535)) throw new Error(`"${entry}" has a port out of range`);
  const wildcard = rawHost.startsWith('*.');
  const host = normalHost(wildcard ? rawHost.slice(2) : rawHost);
  const ipVersion = isIP(host) as 0 | 4 | 6;
  if (ipVersion !== 0) {
    if (wildcard) throw new Error(`"${entry}": a wildcard cannot apply to an IP address`);
    if (port === undefined && !isPublicLiteral(host)) {
      throw new Error(`"${entry}": a loopback, private or link-local address must name its port`);
    }
  } else if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host)) {
    throw new Error(`"${entry}" is not a host name`);
  }
  return { host, wildcard, port, ipVersion };
}

export function egressPolicy(allowedHosts: readonly string[], allowPrivateNetwork = false): EgressPolicy {
  return { rules: allowedHosts.map(parseHostRule), allowPrivateNetwork };
}

function ruleMatches(rule: HostRule, host: string, port: number): boolean {
  if (rule.port !== undefined && rule.port !== port) return false;
  if (rule.wildcard) return host.endsWith(`.${rule.host}`);
  return host === rule.host;
}

/** Whether the list names `host:port`. A name still has to pass {@link addressDenial} once resolved. */
export function decideTarget(policy: EgressPolicy, rawHost: string, port: number): TargetVerdict {
  const host = normalHost(unmapped(rawHost));
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { allowed: false, reason: 'no valid port' };
  const rule = policy.rules.find((candidate) => ruleMatches(candidate, host, port));
  if (!rule) return { allowed: false, reason: `${host}:${port} is not on the allow list` };
  if (rule.ipVersion === 0) return { allowed: true, literal: false };
  const family = familyOf(host);
  if (LINK_LOCAL_OR_METADATA.check(host, family) && !policy.allowPrivateNetwork) {
    return { allowed: false, reason: 'link-local or cloud metadata address' };
  }
  return { allowed: true, literal: true };
}
