// Claude Code on the web as the backend, against the strict Claude-compatibility server in front of
// the real server process (scripted agent examples/question.json): the time from an event to the
// phase the status bar shows, following on the live stream (`/v1/code/sessions/{id}/events/stream`)
// vs Claude Code's 3 s poll, in the same run. N sessions wait on the agent's question (needs_input);
// each gets its reply at a random moment within one poll interval, and we time from just before
// the reply is POSTed to the poller's next phase report (running or plan_ready, whichever the
// events bring first). The status bar is set from that report in the same tick, so this is the
// event -> status bar time less the paint.
import { setMaxListeners } from 'node:events';
import { rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { DEFAULT_POLL_INTERVAL_MS } from '../src/core/poller';
import { setPlanModeEvent, userMessageEvent } from '../src/core/protocol';
import { createClaudeWebBackend, type ClaudeWebBackend } from '../src/client/claudeWeb/backend';
import { makeClaudeHome, makeGitRepo } from '../test/support/claudeCompatFixtures';
import { startClaudeCompatProxy } from '../test/support/claudeCompatProxy';
import { EXAMPLES_DIR, startServer } from '../test/support/serverProcess';
import { result, type BenchResult } from './measure';
import { followForReplies, sleep } from './replyLatency';
import { waitFor } from '../test/support/wait';

export const title = 'Claude Code on the web: event -> phase (status bar) on the live stream vs the 3 s poll (strict server)';

const SESSIONS = 30;
const ORG = 'org-bench-0000-0000-0000-000000000000';

async function latencies(backend: ClaudeWebBackend): Promise<number[]> {
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const ids: string[] = [];
  for (let i = 0; i < SESSIONS; i += 10) {
    const batch = Array.from({ length: Math.min(10, SESSIONS - i) }, (_, j) =>
      backend.createSession({
        title: `bench ${i + j}`,
        events: [
          { type: 'event', data: setPlanModeEvent(`set-mode-bench-${i + j}`) },
          { type: 'event', data: userMessageEvent('Change the build target.') },
        ],
      }),
    );
    ids.push(...(await Promise.all(batch)).map((s) => s.id));
  }
  const { state, polls } = followForReplies(ids, backend.transport, stop.signal);
  try {
    await waitFor(() => state.every((s) => s.ready), { message: 'every session waiting on its question', timeoutMs: 90_000 });
    await Promise.all(
      ids.map(async (sessionId, i) => {
        await sleep(Math.random() * DEFAULT_POLL_INTERVAL_MS);
        state[i]!.sentAt = performance.now();
        await backend.sendEvents(sessionId, [userMessageEvent('Node 20, please.')]);
      }),
    );
    await waitFor(() => state.every((s) => s.latency >= 0), { message: 'every reply to reach the phase', timeoutMs: 30_000 });
  } finally {
    stop.abort();
    await Promise.all(polls);
  }
  return state.map((s) => s.latency);
}

export async function run(): Promise<BenchResult[]> {
  const server = await startServer({ scenario: `${EXAMPLES_DIR}/question.json` });
  const home = await makeClaudeHome({ accessToken: 'token-bench' }, ORG);
  const repo = await makeGitRepo('https://github.com/acme/widgets.git');
  const proxy = await startClaudeCompatProxy({
    upstreamUrl: server.url,
    upstreamToken: server.token,
    validTokens: ['token-bench'],
    organizationUuid: ORG,
    repos: { 'acme/widgets': { app: 'installed' } },
  });
  const results: BenchResult[] = [];
  try {
    for (const mode of ['poll', 'stream'] as const) {
      const { backend } = await createClaudeWebBackend({
        env: home.env,
        homeDir: home.homeDir,
        platform: 'linux',
        baseUrl: proxy.url,
        workspaceFolder: repo,
        log: () => {},
        preferStream: mode === 'stream',
      });
      try {
        const samples = await latencies(backend);
        results.push(
          result(`event -> phase: ${mode === 'stream' ? 'live stream' : '3 s poll'}`, 'ms', 'lower', samples, {
            ...(mode === 'stream' ? { baseline: 'event -> phase: 3 s poll' } : {}),
            note: `${SESSIONS} sessions at once, one reply each at a random moment; from just before the POST to the poller's phase report`,
          }),
        );
      } finally {
        await backend.dispose();
      }
    }
  } finally {
    await proxy.close();
    await server.stop();
    await home.remove();
    await rm(repo, { recursive: true, force: true });
  }
  return results;
}
