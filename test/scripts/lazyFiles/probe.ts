// Bundled by test/scripts/lazyFiles.test.ts with the shipped build's lazy-file plugin into the
// production dist folder, and run there with node: it uses the ACP agent and Claude Code on the
// web backends through the same entry points as the extension, and prints which files Node had
// loaded at each step, as JSON on stdout.
import * as path from 'node:path';
import { createAcpAgentFactory } from '../../../src/sessions/acp';
import { ClaudeWebError, listEnvironments } from '../../../src/sessions/claudeWeb';

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
  controller.abort();
  process.stdout.write(JSON.stringify(steps));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
