// The ACP translator's progress events, fed the updates real agents sent while executing
// (test/fixtures/acp/README.md): nothing while planning, and after approval the todo lists and
// the files each completed edit touched, bound to the approved plan's hash.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SessionUpdate, ToolCallUpdate } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { AcpEventTranslator } from '../../src/agents/acp/eventTranslator';
import { planHash } from '../../src/core/decision';
import { parseEventBatch } from '../../src/core/eventBatch';
import { PROGRESS_SUBTYPE, type ProgressFact } from '../../src/core/execution';
import type { AnyEvent } from '../../src/core/protocol';

type Step = { update: SessionUpdate } | { permission: ToolCallUpdate };

const recorded = (name: string): Step[] =>
  JSON.parse(readFileSync(path.resolve(__dirname, '../fixtures/acp', `${name}.json`), 'utf8')) as Step[];

const HASH = planHash('# Plan\n\n1. Create hello.txt\n2. Edit hello.txt\n');

function replay(steps: readonly Step[], approvedIn?: string): { events: AnyEvent[]; facts: ProgressFact[] } {
  const events: AnyEvent[] = [];
  const translator = new AcpEventTranslator((event) => events.push(event));
  if (approvedIn !== undefined) translator.approved(HASH, approvedIn);
  for (const step of steps) {
    if ('update' in step) translator.update(step.update);
    else translator.ensureToolUse(step.permission);
  }
  const batch = parseEventBatch(events);
  assert.equal(batch.malformed, 0);
  for (const event of batch.progress ?? []) assert.equal(event.plan_hash, HASH);
  return { events, facts: (batch.progress ?? []).map((e) => e.progress) };
}

const shape = (facts: readonly ProgressFact[]) =>
  facts.map((f) => (f.kind === 'todos' ? { todos: f.entries.map((e) => `${e.status}: ${e.content}`) } : { file: f.path, todo: f.todo }));

describe('ACP translator: the execution progress of real agents', () => {
  it("Claude's adapter: its TodoWrite lists and its Write and Edit of hello.txt, relative to the workspace", () => {
    const { facts } = replay(recorded('claude-exec-todowrite'), '/tmp/probe-claude-ws-gEcZop');
    assert.deepEqual(shape(facts), [
      { todos: ['in_progress: Creating hello.txt', 'pending: Edit hello.txt'] },
      { file: 'hello.txt', todo: 'Creating hello.txt' },
      { file: 'hello.txt', todo: 'Creating hello.txt' },
      { todos: ['completed: Create hello.txt', 'completed: Edit hello.txt'] },
    ]);
    assert.deepEqual(
      facts.map((f) => f.seq),
      [0, 1, 2, 3],
    );
  });

  it("Codex's adapter: its update_plan lists and each apply_patch, named in the diff and the permission request", () => {
    const { facts } = replay(recorded('codex-exec-update_plan'), '/tmp/probe-codex-Hwwtqm/ws');
    const files = facts.filter((f) => f.kind === 'file_touched');
    assert.ok(files.length >= 1, 'an edit was reported');
    for (const file of files) assert.equal(file.path, 'hello.txt');
    assert.deepEqual(shape(facts.filter((f) => f.kind === 'todos')).slice(0, 1), [
      { todos: ['in_progress: Create hello.txt', 'pending: Edit hello.txt'] },
    ]);
  });

  it('keeps a file outside the workspace as the agent named it', () => {
    const { facts } = replay(recorded('claude-exec-todowrite'), '/work/elsewhere');
    const files = facts.filter((f) => f.kind === 'file_touched');
    assert.deepEqual(
      files.map((f) => f.path),
      ['/tmp/probe-claude-ws-gEcZop/hello.txt', '/tmp/probe-claude-ws-gEcZop/hello.txt'],
    );
  });

  it('reports nothing while planning: no plan was approved, so there is nothing to bind progress to', () => {
    const { events, facts } = replay(recorded('claude-exec-todowrite'));
    assert.deepEqual(facts, []);
    assert.ok(!events.some((e) => e.type === 'system' && (e as { subtype?: string }).subtype === PROGRESS_SUBTYPE));
    // The tool calls themselves are in the log as before.
    assert.ok(events.some((e) => e.type === 'assistant'));
  });

  it('reports no file for an edit that failed', () => {
    const steps = recorded('claude-exec-todowrite').map((step) =>
      'update' in step && step.update.sessionUpdate === 'tool_call_update' && step.update.status === 'completed'
        ? { update: { ...step.update, status: 'failed' as const } }
        : step,
    );
    const { facts } = replay(steps, '/tmp/probe-claude-ws-gEcZop');
    assert.deepEqual(
      facts.filter((f) => f.kind === 'file_touched'),
      [],
    );
  });
});
