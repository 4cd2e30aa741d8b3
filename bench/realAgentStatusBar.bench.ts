// From a real agent's plan request to "Ultraplan: plan ready" painted in VS Code's status bar, in
// real code-server 4.100.3 + Chromium with the production build, on the embedded backend:
//   claude    Claude's real ACP adapter (0.101.0), its model scripted on 127.0.0.1 in this process:
//             t0 is the moment the scripted model answers with the ExitPlanMode tool call, so the
//             figure includes the adapter turning that into its permission request
//   gemini    Gemini CLI 0.61.0 (`gemini --acp`), its model scripted likewise: t0 is the moment the
//             model answers with exit_plan_mode (after writing its plan file in the round before)
//   fake      the fake ACP agent program (test/fixtures/fake-acp-agent), the baseline: t0 is the
//             moment it sends its permission request
// One window runs every session, alternating (ABBA after one unrecorded warm-up each) by changing
// ultraplan.agent.command, so both see the same machine load. t1 as in acpStatusBar.bench.ts: the
// frame after a status bar item says "Ultraplan: plan ready"; page and bench clocks related by
// the shortest ping. Each plan is approved afterwards, so the next turns the status bar again.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createWorkspace, dismissNotifications, statusBarTexts, waitFor } from '../test/e2e/harness';
import { readAgentRecord } from '../test/support/fakeAcpAgent';
import { planTask } from '../test/e2e/ultraplanSteps';
import { anthropicApi } from '../test/support/modelApi/anthropic';
import { geminiApi } from '../test/support/modelApi/gemini';
import { Scenario, ScriptedModelServer, type ScenarioRound } from '../test/support/modelApi/scenario';
import { killGroupsLeft, processesWithHome } from '../test/support/processes';
import { CLAUDE_ADAPTER, claudeEnv, geminiArgv, geminiEnv, geminiPlansDir } from '../test/support/realAgents';
import { fakeAgentProgram } from '../test/support/fakeAcpAgent';
import { watchStatusBar } from './acpStatusBar.bench';
import { clockOffset, now, openStagedWindow, type StagedWindow } from './codeServerWindow';
import { EXTENSION_ID, buildBundles, readManifest, stageExtension, tempRoot } from './extensionStaging';
import { exitPlanScenario } from './fakeAgentScenario';
import { result, type BenchResult } from './measure';

export const title =
  'Plan request -> "Ultraplan: plan ready" painted (code-server + Chromium, embedded): the real Claude adapter and Gemini CLI vs the fake agent';

const SAMPLES = 6;
const PLAN_READY = 'Ultraplan: plan ready';
type Agent = 'claude' | 'gemini' | 'fake';
const AGENTS: Agent[] = ['claude', 'gemini', 'fake'];
/** One unrecorded warm-up each, then rounds that rotate which agent goes first. */
const ORDER: Agent[] = [
  ...AGENTS,
  ...Array.from({ length: SAMPLES }, (_, i) => [...AGENTS.slice(i % 3), ...AGENTS.slice(0, i % 3)]).flat(),
];
const WARMUP = AGENTS.length;

interface RecordEntry {
  kind: string;
  hr?: number;
  pid?: number;
}

export async function run(): Promise<BenchResult[]> {
  const root = await tempRoot('ultraplan-bench-real-agent-');
  const home = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'ultraplan-bench-claude-home-'));
  const scenarioFile = path.join(root.dir, 'scenario.json');
  const record = path.join(root.dir, 'record.jsonl');
  // Claude: per session, the plan request, then (after Approve) a closing text.
  const exitStamps: number[] = [];
  const rounds: ScenarioRound[] = ORDER.flatMap((): ScenarioRound[] => [
    () => {
      exitStamps.push(now());
      return { toolCalls: [{ name: 'ExitPlanMode', input: { plan: '# Bench plan\n\n1. Step' } }] };
    },
    () => ({ text: 'Done.' }),
  ]);
  const model = new ScriptedModelServer(anthropicApi, new Scenario(rounds));
  // Gemini: per session, its plan file, the plan request, then (after Approve) a closing text.
  const geminiStamps: number[] = [];
  const geminiRounds: ScenarioRound[] = ORDER.flatMap((_, n): ScenarioRound[] => [
    (view) => {
      const plans = geminiPlansDir(view);
      return {
        toolCalls: [{ name: 'write_file', input: { file_path: path.join(plans, `bench-${n}.md`), content: '# Bench plan\n\n1. Step\n' } }],
      };
    },
    () => {
      geminiStamps.push(now());
      return { toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: `bench-${n}.md` } }] };
    },
    () => ({ text: 'Done.' }),
  ]);
  const geminiModel = new ScriptedModelServer(geminiApi, new Scenario(geminiRounds));
  const geminiHome = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'ultraplan-bench-gemini-home-'));
  let workspace: string | undefined;
  let window: StagedWindow | undefined;
  const samples: Array<{ agent: Agent; ms: number }> = [];
  try {
    const env = claudeEnv(home, await model.start());
    const claudeArgv = ['/usr/bin/env', ...Object.entries(env).map(([key, value]) => `${key}=${value}`), CLAUDE_ADAPTER];
    const fakeArgv = [process.execPath, fakeAgentProgram(), scenarioFile, record];
    const gemini = geminiEnv(geminiHome, await geminiModel.start());
    const geminiCommand = ['/usr/bin/env', ...Object.entries(gemini).map(([key, value]) => `${key}=${value}`), ...geminiArgv()];
    const argvOf = (agent: Agent): string[] => (agent === 'claude' ? claudeArgv : agent === 'gemini' ? geminiCommand : fakeArgv);
    const dist = await buildBundles(path.join(root.dir, 'build'), { production: true });
    const extension = await stageExtension(path.join(root.dir, 'extension'), { dist });
    workspace = await createWorkspace({});
    window = await openStagedWindow({
      suite: 'bench-real-agent-status-bar',
      workspace,
      settings: { 'ultraplan.backend': 'embedded', 'ultraplan.agent.choice': 'custom', 'ultraplan.agent.command': claudeArgv },
      staged: [{ id: EXTENSION_ID, version: readManifest().version, folder: extension }],
    });
    await dismissNotifications(window.page);
    let current: Agent = 'claude';
    for (const [n, agent] of ORDER.entries()) {
      if (agent !== current) {
        await window.server.probe.updateConfiguration('ultraplan', 'agent.command', argvOf(agent));
        current = agent;
      }
      const { page } = window;
      const stampsBefore = exitStamps.length;
      const geminiBefore = geminiStamps.length;
      const fakeBefore = readAgentRecord<RecordEntry>(record).filter((e) => e.kind === 'permission_request_sent').length;
      if (agent === 'fake')
        await fs.promises.writeFile(scenarioFile, JSON.stringify(exitPlanScenario(200 + Math.random() * 1000, `bench-${n}`)));
      await watchStatusBar(page, PLAN_READY);
      await planTask(page, `bench ${n}: plan a settings store migration`);
      const painted = (await page.evaluate('window.__ultraplanBenchStatus')) as { paintAt: number };
      const clock = await clockOffset(page);
      const sentAt =
        agent === 'claude'
          ? exitStamps[stampsBefore]
          : agent === 'gemini'
            ? geminiStamps[geminiBefore]
            : readAgentRecord<RecordEntry>(record).filter((e) => e.kind === 'permission_request_sent')[fakeBefore]?.hr;
      if (typeof sentAt !== 'number') throw new Error(`no plan request stamped for the ${agent} sample ${n}`);
      const ms = painted.paintAt - clock.offset - sentAt;
      console.log(
        `  ${n < WARMUP ? 'warm-up' : `sample ${n - WARMUP + 1}/${ORDER.length - WARMUP}`} ${agent}: plan request -> status bar painted ${ms.toFixed(0)} ms (clock error <= ${clock.errorMs.toFixed(1)} ms)`,
      );
      if (n >= WARMUP) samples.push({ agent, ms });
      await window.server.probe.executeCommand('ultraplan.review.approve');
      await waitFor(async () => !(await statusBarTexts(page)).some((t) => t.includes(PLAN_READY)) || undefined, {
        timeoutMs: 30_000,
        message: 'the status bar to leave plan ready',
      });
    }
  } finally {
    await window?.close();
    killGroupsLeft([
      ...processesWithHome(home),
      ...processesWithHome(geminiHome),
      ...readAgentRecord<RecordEntry>(record).flatMap((e) => (e.kind === 'started' && typeof e.pid === 'number' ? [e.pid] : [])),
    ]);
    await model.close();
    await geminiModel.close();
    await fs.promises.rm(geminiHome, { recursive: true, force: true });
    if (workspace) await fs.promises.rm(workspace, { recursive: true, force: true });
    await fs.promises.rm(home, { recursive: true, force: true });
    await root.remove();
  }
  const of = (agent: Agent) => samples.filter((s) => s.agent === agent).map((s) => s.ms);
  return [
    result('fake ACP agent (embedded)', 'ms', 'lower', of('fake'), {
      note: 'the fake agent stamps its permission request; frame painted after "plan ready"',
    }),
    result('Claude ACP adapter 0.101.0 (embedded)', 'ms', 'lower', of('claude'), {
      baseline: 'fake ACP agent (embedded)',
      note: 'from the scripted model answering ExitPlanMode: includes the adapter turning it into its permission request',
    }),
    result('Gemini CLI 0.61.0 (embedded)', 'ms', 'lower', of('gemini'), {
      baseline: 'fake ACP agent (embedded)',
      note: 'from the scripted model answering exit_plan_mode: includes Gemini checking its plan file and asking',
    }),
  ];
}
