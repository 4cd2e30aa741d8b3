// Built by test/scripts/bundleGraph.test.ts as one more entry of the production Node graph
// (esbuild.mjs) and run with node and loadLog.mjs: it uses an ACP agent, Claude Code on the web
// and a session server through the same seams as the extension, and prints which files of the
// graph Node had loaded at each step, as JSON on stdout.
import { readFileSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SessionsError } from '../../../src/core/errors';
import { createAcpAgentFactory } from '../../../src/agents/acp/acpAgentFactory';
import { ClaudeWebError } from '../../../src/client/claudeWeb';
import { connectServer } from '../../../src/client/serverConnection';
import { waitFor } from '../../support/wait';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The graph's files loaded so far, by path from the probe's folder (`chunks/acpAgent-….mjs`). */
function loaded(): string[] {
  const urls = readFileSync(process.env.ULTRAPLAN_LOAD_LOG ?? '', 'utf8')
    .split('\n')
    .filter(Boolean);
  return urls.map((url) => path.relative(here, fileURLToPath(url)).split(path.sep).join('/'));
}

async function main(): Promise<void> {
  const steps: Record<string, unknown> = { atLoad: loaded() };
  const factory = await createAcpAgentFactory({ argv: ['/nonexistent/ultraplan-agent'], cwd: here, label: 'Missing (ACP)' });
  steps.factoryMade = loaded();
  const agent = factory({ sessionId: 's1', title: 'probe' });
  const results: string[] = [];
  const controller = new AbortController();
  await agent.start(
    {
      sessionId: 's1',
      signal: controller.signal,
      emit: (event) => {
        if (event.type === 'result') results.push(String((event as { result?: unknown }).result));
      },
      setStatus: () => undefined,
      log: () => undefined,
    },
    'plan',
  );
  // Bounded, and no throw: the test reads what came (or that nothing did) from the steps printed.
  await waitFor(() => results.length > 0, { timeoutMs: 10_000 }).catch(() => undefined);
  steps.agentStarted = { loaded: loaded(), label: agent.label, results };
  await agent.stop();
  // No login in an empty config folder: the error thrown inside the backend's chunk is the class
  // this file imported, with no brand.
  const empty = path.join(here, 'no-claude-login');
  const { listEnvironments } = await import('../../../src/client/claudeWeb/backend');
  try {
    await listEnvironments({ configDir: empty, homeDir: empty, env: {}, platform: 'linux' });
    steps.claudeWeb = { loaded: loaded(), error: null };
  } catch (err) {
    steps.claudeWeb = {
      loaded: loaded(),
      error: { isClaudeWebError: err instanceof ClaudeWebError, reason: (err as ClaudeWebError).reason },
    };
  }
  // A port nobody listens on: the client's SessionsError, the class the poller checks.
  const port = await closedPort();
  const server = connectServer({ baseUrl: `http://127.0.0.1:${port}`, getToken: () => Promise.resolve('t') }, { preferStream: false });
  try {
    await server.getSession('s1');
    steps.server = { error: null };
  } catch (err) {
    steps.server = { error: { isSessionsError: err instanceof SessionsError, kind: (err as SessionsError).kind } };
  }
  steps.atEnd = loaded();
  controller.abort();
  process.stdout.write(JSON.stringify(steps));
}

function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const listener = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = listener.address() as net.AddressInfo;
      listener.close(() => resolve(port));
    });
    listener.on('error', reject);
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
