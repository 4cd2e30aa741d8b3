// Attacks on the read-only policy for fs/write_text_file: a plan-file exception used to write
// somewhere else. Pure verdicts first, then the real AcpAgent with the fake ACP agent, for the
// symlink cases that only the file system can show.
import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { agentDirs, inAgentPlansFolder, writeVerdict } from '../../src/agents/acp/readOnlyPolicy';
import { readAgentRecord, type FakeRun } from '../support/fakeAcpAgent';
import { FakeAgentRuns } from '../support/recordingAgentContext';
import { DEFAULT_AND_PLAN_MODES, ORIGINAL_APP } from '../support/acpFixtures';

describe('read-only policy: a plan-file exception does not write elsewhere', () => {
  const workspace = '/work/ws';
  const home = '/home/u';
  const existingFile = { symlink: false, regular: true, links: 1 };
  const planning = (filePath: string, options: { created?: string[]; existing?: typeof existingFile | null } = {}) =>
    writeVerdict({
      filePath,
      workspace,
      planning: true,
      sessionPlanFiles: new Set(options.created ?? []),
      existing: options.existing ?? null,
      home,
    });

  it('a file the agent created is writable again only when it is Markdown and no link', () => {
    assert.equal(planning('/work/ws/plans/x.md', { created: ['/work/ws/plans/x.md'], existing: existingFile }).allowed, true);
    assert.equal(
      planning('/work/ws/plans/x.md', { created: ['/work/ws/plans/x.md'], existing: { ...existingFile, links: 2 } }).allowed,
      false,
    );
    assert.equal(
      planning('/work/ws/plans/x.md', { created: ['/work/ws/plans/x.md'], existing: { ...existingFile, symlink: true } }).allowed,
      false,
    );
    assert.equal(planning('/home/u/.bashrc', { existing: existingFile }).allowed, false);
    assert.equal(planning('/home/u/.ssh/authorized_keys').allowed, false);
  });

  it('an existing workspace file is never writable while planning, whatever its name', () => {
    for (const file of [
      '/work/ws/package.json',
      '/work/ws/src/app.ts',
      '/work/ws/.husky/pre-commit',
      '/work/ws/.vscode/tasks.json',
      '/work/ws/docs/plan.md',
      '/work/ws/PLAN.md',
    ]) {
      const verdict = planning(file, { existing: existingFile });
      assert.equal(verdict.allowed, false, file);
      assert.match(!verdict.allowed ? verdict.message : '', /planning is read-only/);
    }
  });

  it('the plan-like-name rule is a word, and never an instruction file: explanation.md and plans/CLAUDE.md are refused', () => {
    assert.equal(planning('/work/ws/docs/explanation.md').allowed, false);
    assert.equal(planning('/work/ws/docs/airplane.md').allowed, false);
    for (const name of ['CLAUDE.md', 'AGENTS.md', 'GEMINI.md', 'claude.local.md']) {
      assert.equal(planning(`/work/ws/plans/${name}`).allowed, false, name);
      assert.equal(planning(`/home/u/.claude/plans/${name}`).allowed, false, name);
    }
    assert.equal(planning('/work/ws/docs/greeting-plan.md').allowed, true);
    assert.equal(planning('/work/ws/plans/feature.md').allowed, true);
  });

  it("outside the workspace, only the agent's own plans folder: not any folder named plans, not a plan-like name", () => {
    // Fedora's ~/.bashrc sources every file in ~/.bashrc.d.
    const sourced = planning('/home/u/.bashrc.d/plan.md');
    assert.equal(sourced.allowed, false);
    assert.match(!sourced.allowed ? sourced.message : '', /planning is read-only/);
    assert.equal(planning('/etc/profile.d/PLAN.md').allowed, false);
    assert.equal(planning('/home/u/.bashrc.d/plans/x.md').allowed, false);
    assert.equal(planning('/home/u/.claude/plans/lively-otter.md').allowed, true);
    assert.equal(planning('/home/u/.claude/plans/deeper/x.md').allowed, false);
    assert.equal(planning('/home/u/.gemini/tmp/0f3a/plans/x.md').allowed, true);
    assert.equal(planning('/home/u/.claude/plans/lively-otter.sh').allowed, false);
    assert.equal(planning('/work/ws/PLAN.md').allowed, true);
  });

  it("the agent's own plans folder follows its environment (CLAUDE_CONFIG_DIR, GEMINI_CLI_HOME)", () => {
    const dirs = agentDirs(home, { CLAUDE_CONFIG_DIR: '/srv/claude-config', GEMINI_CLI_HOME: '/srv/gemini-home' });
    const moved = (filePath: string) =>
      writeVerdict({ filePath, workspace, planning: true, sessionPlanFiles: new Set(), existing: null, home: dirs }).allowed;
    assert.equal(moved('/srv/claude-config/plans/otter.md'), true);
    assert.equal(moved('/srv/gemini-home/.gemini/tmp/p/s/plans/x.md'), true);
    assert.equal(moved('/home/u/.claude/plans/otter.md'), false);
    assert.equal(moved('/srv/claude-config/otter.md'), false);
    assert.ok(inAgentPlansFolder('/home/u/.gemini/tmp/p/plans/x.md', home));
    assert.ok(!inAgentPlansFolder('/home/u/.gemini/tmp/plans/x.md', home));
  });

  it('nothing under .git is written, in any case spelling, planning or not', () => {
    for (const planningNow of [true, false]) {
      for (const file of ['/work/ws/.git/hooks/plans/pre-commit.md', '/work/ws/.GIT/hooks/pre-commit', '/work/ws/sub/.git/config']) {
        const verdict = writeVerdict({
          filePath: file,
          workspace,
          planning: planningNow,
          sessionPlanFiles: new Set([file]),
          existing: null,
          home,
        });
        assert.equal(verdict.allowed, false, `${file} (planning ${planningNow})`);
        assert.match(!verdict.allowed ? verdict.message : '', /\.git/);
      }
    }
    assert.equal(
      writeVerdict({
        filePath: '/work/ws/.github/workflows/ci.yml',
        workspace,
        planning: false,
        sessionPlanFiles: new Set(),
        existing: null,
        home,
      }).allowed,
      true,
    );
  });

  it('dot-dot segments are resolved before any check', () => {
    assert.equal(planning('/work/ws/plans/../../../home/u/.bashrc.d/plan.md').allowed, false);
    assert.equal(planning('/work/ws/plans/../src/app.ts').allowed, false);
  });
});

describe('AcpAgent: writes through symlinks are checked where they land', function () {
  this.timeout(30_000);
  const runs = new FakeAgentRuns();
  let run: FakeRun;
  let outside: string;

  afterEach(async () => {
    await runs.stopAll();
    await rm(outside, { recursive: true, force: true });
  });

  it('refuses a plan file that is a symlink to a source file, a dangling one, and a folder linked outside the workspace', async () => {
    outside = await mkdtemp(path.join(tmpdir(), 'ultraplan-outside-'));
    run = await runs.prepare({
      description: 'Writes plan-looking paths that are symlinks, then a real plan file.',
      modes: DEFAULT_AND_PLAN_MODES,
      turns: [
        [
          { writeFile: { path: '{{cwd}}/plans/linked.md', content: 'export const hacked = true;\n' } },
          { writeFile: { path: '{{cwd}}/plans/dangling.md', content: 'echo pwned\n' } },
          { writeFile: { path: '{{cwd}}/away/PLAN.md', content: 'away\n' } },
          { writeFile: { path: '{{cwd}}/plans/real-plan.md', content: '# The plan\n' } },
          { chunk: 'done' },
        ],
      ],
    });
    await mkdir(path.join(run.workspace, 'plans'));
    await symlink(path.join(run.workspace, 'src', 'app.ts'), path.join(run.workspace, 'plans', 'linked.md'));
    await symlink(path.join(outside, 'sourced-by-shell'), path.join(run.workspace, 'plans', 'dangling.md'));
    await symlink(outside, path.join(run.workspace, 'away'));

    const { ctx } = await runs.startOn(run);
    await ctx.waitFor(() => ctx.results().length > 0, 15_000, 'turn end');

    const writes = readAgentRecord(run.record).filter((entry) => entry.kind === 'write_outcome');
    assert.deepEqual(
      writes.map((w) => w.ok),
      [false, false, false, true],
      JSON.stringify(writes),
    );
    assert.match(String(writes[0]?.message), /linked\.md: it is a symbolic link/);
    assert.match(String(writes[1]?.message), /dangling\.md: it is a symbolic link/);
    assert.match(String(writes[2]?.message), /planning is read-only/);
    assert.equal(await readFile(path.join(run.workspace, 'src', 'app.ts'), 'utf8'), ORIGINAL_APP);
    await assert.rejects(stat(path.join(outside, 'sourced-by-shell')), /ENOENT/);
    await assert.rejects(stat(path.join(outside, 'PLAN.md')), /ENOENT/);
    assert.equal(await readFile(path.join(run.workspace, 'plans', 'real-plan.md'), 'utf8'), '# The plan\n');
    assert.equal(ctx.systemEvents('acp_refused').length, 3);
  });
});
