// Bundled by test/scripts/lazyFiles.test.ts with the shipped build's lazy-file plugin into the
// production dist folder, and run there with node: it uses an ACP agent, Claude Code on the web
// and a session server through the same entry points as the extension, and prints which files
// Node had loaded at each step, as JSON on stdout.
import * as net from 'node:net';
import * as path from 'node:path';
import { SessionsError } from '../../../src/core/errors';
import { createAcpAgentFactory } from '../../../src/sessions/acp';
import { ClaudeWebError, listEnvironments } from '../../../src/sessions/claudeWeb';
import { connectServer } from '../../../src/sessions/serverConnectionLoader';

const loaded = (): string[] => Object.keys(require.cache).map((file) => path.basename(file));

async function main(): Promise<void> {
  const steps: Record<string, unknown> = { atLoad: loaded() };
  const factory = createAcpAgentFactory({ argv: ['/nonexistent/ultraplan-agent'], cwd: __dirname, label: 'Missing (ACP)' });
  steps.factoryMade = loaded();
  const agent = factory({ sessionId: 's1', title: 'probe' });
  steps.agentMade = { loaded: loaded(), label: agent.label };
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
  for (let waited = 0; results.length === 0 && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  steps.agentStarted = { loaded: loaded(), results };
  await agent.stop();
  // No login in an empty config folder: the backend's own ClaudeWebError, checked with this bundle's class.
  const empty = path.join(__dirname, 'no-claude-login');
  try {
    await listEnvironments({ configDir: empty, homeDir: empty, env: {}, platform: 'linux' });
    steps.claudeWeb = { loaded: loaded(), error: null };
  } catch (err) {
    steps.claudeWeb = {
      loaded: loaded(),
      error: { isClaudeWebError: err instanceof ClaudeWebError, reason: (err as ClaudeWebError).reason },
    };
  }
  // A port nobody listens on: the server client's own SessionsError, checked with this bundle's class.
  const port = await closedPort();
  const server = connectServer({ baseUrl: `http://127.0.0.1:${port}`, getToken: () => Promise.resolve('t') }, { preferStream: false });
  steps.serverMade = loaded();
  try {
    await server.getSession('s1');
    steps.server = { error: null };
  } catch (err) {
    steps.server = { error: { isSessionsError: err instanceof SessionsError, kind: (err as SessionsError).kind } };
  }
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
