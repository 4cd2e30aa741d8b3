// How an ACP agent is named to people when nothing better is known: from its command line. Used
// when choosing an agent, long before (and apart from) the agent runtime in acpAgent.ts.
import * as path from 'node:path';

/** A readable label from a command line: the npm package or the program name. */
export function labelFromArgv(argv: readonly string[]): string {
  const program = argv[0] ? path.basename(argv[0]) : 'agent';
  if (program === 'npx' || program === 'pnpx' || program === 'bunx') {
    const pkg = argv.slice(1).find((arg) => !arg.startsWith('-'));
    if (pkg) return `${pkg} (ACP)`;
  }
  // An interpreter running a script: the script says what it is.
  if (/^(node|tsx|bun|deno|python3?)(\.exe)?$/.test(program)) {
    const script = argv.slice(1).find((arg) => !arg.startsWith('-') && arg !== 'run');
    if (script) return `${path.basename(script)} (ACP)`;
  }
  return `${program} (ACP)`;
}
