// A real git repository for verification against a plan: a 4-step approved plan, the repository
// as it was at approval (committed), and the change since that does steps 1, 2 and 4, skips step 3
// and edits src/config.ts, which no step names. Also the scripted agents' replies for it: the
// scripted agent (src/agents/scripted) says one fixed text per turn, so finders and verifiers are
// agents of their own.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseScenario } from '../../../src/agents/catalogue/scenario';
import { scriptedAgentFactory } from '../../../src/agents/scripted/scriptedAgent';
import type { ReviewerSource } from '../../../src/client/review/fleetRunner';
import { InProcessBackend } from '../../../src/service/inProcessBackend';
import { SessionHost } from '../../../src/service/host/sessionHost';
import { ReviewRepo, git } from './gitRepo';

export const PLAN = [
  '# Add a greeting',
  '',
  '1. Create `src/greet.ts` exporting `greet(name)`, which returns "Hello, NAME".',
  '2. Export `greet` from `src/index.ts`.',
  '3. Add a test for `greet` in `test/greet.test.ts`.',
  '4. Document `greet` in `README.md`.',
  '',
].join('\n');

/** A finder's reply on the change: steps 1, 2, 4 done, 3 missing, src/config.ts not in the plan. */
export const FINDER_REPLY = {
  steps: [
    {
      stepId: '1',
      verdict: 'done',
      explanation: 'greet() returns the greeting.',
      evidence: [{ file: 'src/greet.ts', startLine: 1, endLine: 3 }],
    },
    {
      stepId: '2',
      verdict: 'done',
      explanation: 'index.ts re-exports greet.',
      evidence: [{ file: 'src/index.ts', startLine: 2, endLine: 2 }],
    },
    { stepId: '3', verdict: 'missing', explanation: 'There is no test/greet.test.ts in the change.', evidence: [] },
    {
      stepId: '4',
      verdict: 'done',
      explanation: 'README.md documents greet.',
      evidence: [{ file: 'README.md', startLine: 3, endLine: 3 }],
    },
  ],
  outOfPlan: [
    { file: 'src/config.ts', startLine: 1, endLine: 1, explanation: 'Raises the timeout from 10 to 60 seconds; no step asks for it.' },
  ],
};

export const CONFIRMED = { verdict: 'confirmed', reason: 'The claim holds in the code.' };
export const REFUTED = { verdict: 'refuted', reason: 'test/greet.test.ts is there and tests greet.' };

/** What the scripted agent says: one JSON block, as a real agent's last message carries it. */
export function jsonText(value: unknown): string {
  return `Here is what I found.\n\n\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\`\n`;
}

/** A scripted agent's scenario (the file `--agent scripted:FILE` reads): it says `text` (after `sleepMs`) and ends its turn. */
export function sayScenario(
  title: string,
  text: string,
  sleepMs = 0,
): { title: string; steps: Array<{ say: string } | { sleep: number }> } {
  return { title, steps: [...(sleepMs ? [{ sleep: sleepMs }] : []), { say: text }] };
}

export class PlanRepo extends ReviewRepo {
  /** The approved plan's file, outside the repository (so it is not part of the change). */
  planFile = '';
  private dir = '';

  override async open(): Promise<this> {
    this.root = await mkdtemp(path.join(tmpdir(), 'ultraplan-verify-repo-'));
    this.dir = await mkdtemp(path.join(tmpdir(), 'ultraplan-verify-files-'));
    git(this.root, 'init', '-q', '-b', 'main');
    await this.write('README.md', '# Shop\n');
    await this.write('src/index.ts', "export { total } from './total';\n");
    await this.write('src/config.ts', 'export const TIMEOUT_SECONDS = 10;\n');
    git(this.root, 'add', '.');
    git(this.root, 'commit', '-qm', 'before the plan');
    // The execution: steps 1, 2 and 4 (greet.ts committed, the rest uncommitted), no test, and config.ts changed.
    await this.write('src/greet.ts', 'export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n');
    git(this.root, 'add', 'src/greet.ts');
    git(this.root, 'commit', '-qm', 'greet');
    await this.write('src/index.ts', "export { total } from './total';\nexport { greet } from './greet';\n");
    await this.write('README.md', '# Shop\n\n`greet(name)` greets a customer.\n');
    await this.write('src/config.ts', 'export const TIMEOUT_SECONDS = 60;\n');
    await this.write('.env', 'API_TOKEN=never-sent\n');
    git(this.root, 'add', '-f', '.env');
    this.planFile = path.join(this.dir, 'PLAN.md');
    await writeFile(this.planFile, PLAN);
    return this;
  }

  /** A file outside the repository (a scenario for `--agent scripted:FILE`). */
  async file(name: string, text: string): Promise<string> {
    const file = path.join(this.dir, name);
    await writeFile(file, text);
    return file;
  }

  override async close(): Promise<void> {
    await super.close();
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}

/** An embedded host running the scripted agent that says `text`; sessions the fleet opens on it are counted. */
export class ScriptedSource {
  readonly host: SessionHost;
  readonly backend: InProcessBackend;
  readonly source: ReviewerSource;

  constructor(label: string, text: string, sleepMs = 0) {
    this.host = new SessionHost({ agentFactory: scriptedAgentFactory(parseScenario(sayScenario(label, text, sleepMs)), label) });
    this.backend = new InProcessBackend({ host: this.host, label });
    this.source = { label, backend: this.backend };
  }

  /** The sessions the fleet ran here, each with its title and status. */
  sessions(): Array<{ title: string; status: string }> {
    return this.host.listSessions().map((s) => ({ title: s.title ?? '', status: s.session_status }));
  }

  dispose(): Promise<void> {
    return this.backend.dispose();
  }
}
