#!/usr/bin/env node
// `node scripts/try-issuer.mjs [--port N]`: the tests' OpenID provider (`oidc-provider`, with its
// login and consent pages: test/support/openidProvider.ts) on 127.0.0.1, to sign in to a team
// server tried on one machine (docs/team.md). It knows one public client, `ultraplan-vscode`
// (PKCE, loopback redirect, device code, refresh tokens), and two users with passwords. stdout
// says the issuer, the client, the audience its access tokens carry and the users, one per line;
// Ctrl-C (or SIGTERM) stops it and exits 0. Keys and grants live in memory: a restart signs
// everyone out. Needs the dev dependencies (`npm ci`): it runs the TypeScript through tsx.
import { register as registerCjs } from 'tsx/cjs/api';
import { register as registerEsm } from 'tsx/esm/api';
import { fail as failWith, portFlag } from './try-command-line.mjs';

const NAME = 'try-issuer';
const DEFAULT_PORT = 8790;

function fail(message) {
  failWith(NAME, message);
}

const port = portFlag(NAME, DEFAULT_PORT);

// As `node --import tsx` does for the tests: TypeScript loaded by require and by import alike.
registerCjs();
registerEsm();
// The repository's TypeScript is CommonJS to tsx: its exports are the module's default.
const support = await import('../test/support/openidProvider.ts');
const { startOpenidProvider, TEST_USERS } = support.default ?? support;
let provider;
try {
  provider = await startOpenidProvider({ port });
} catch (err) {
  fail(err.code === 'EADDRINUSE' ? `port ${port} on 127.0.0.1 is in use: pick another with --port N` : err.message);
}
const lines = [
  `issuer ${provider.issuer}`,
  `client ${provider.clientId}`,
  `audience ${provider.audience}`,
  ...Object.entries(TEST_USERS).map(([login, user]) => `user ${login} password ${user.password} groups ${user.groups.join(',')}`),
];
let stopping = false;
const stop = async (signal) => {
  if (stopping) process.exit(1);
  stopping = true;
  process.stderr.write(`${NAME}: ${signal}: stopping\n`);
  await provider.close();
  process.exit(0);
};
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
// After the handlers: whoever reads these lines as "ready" may signal at once, and must get a clean stop.
process.stdout.write(`${lines.join('\n')}\n`);
process.stderr.write(`${NAME}: sign in on its own pages at ${provider.issuer}; Ctrl-C stops it\n`);
