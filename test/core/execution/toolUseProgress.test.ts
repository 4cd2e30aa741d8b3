// ToolUseProgressReader on Claude Code's own log: its tools name files by absolute path under the
// working folder its init event names (ParsedBatch.workingFolder) (Claude Code on the web: the checkout in its container), and
// the checklist shows them as the repository names them.
import { strict as assert } from 'node:assert';
import { KnownEventSchema, type KnownEvent } from '../../../src/core/protocol';
import { parseEventBatch } from '../../../src/core/eventBatch';
import { ToolUseProgressReader } from '../../../src/core/execution/toolUseProgress';

const event = (value: unknown): KnownEvent => KnownEventSchema.parse(value);
const toolUse = (id: string, name: string, input: unknown) =>
  event({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id, name, input }] } });
const toolResult = (id: string, content: string) =>
  event({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content }] } });

function approvedReader(cwd: string | undefined): ToolUseProgressReader {
  const reader = new ToolUseProgressReader();
  if (cwd !== undefined) reader.setWorkingFolder(cwd);
  reader.read(toolUse('plan', 'ExitPlanMode', { plan: '1. x' }), 't');
  reader.read(toolResult('plan', 'User has approved your plan.'), 't');
  return reader;
}

function touched(reader: ToolUseProgressReader, name: string, input: unknown): string[] {
  return reader
    .read(toolUse(`t${Math.random()}`, name, input), 't')
    .flatMap(({ fact }) => (fact.kind === 'file_touched' ? [fact.path] : []));
}

describe('ToolUseProgressReader: the files of Claude Code’s edits', () => {
  it('the batch says the folder its last init names; a relative or missing cwd says none', () => {
    const init = (cwd: unknown) => ({ type: 'system', subtype: 'init', cwd, permissionMode: 'plan' });
    assert.equal(parseEventBatch([init('/a'), init('/home/user/widgets')]).workingFolder, '/home/user/widgets');
    assert.equal(parseEventBatch([init('relative')]).workingFolder, undefined);
    assert.equal(parseEventBatch([init(undefined), { type: 'system', subtype: 'status', cwd: '/x' }]).workingFolder, undefined);
  });

  it('a file under the init’s working folder is named as the repository names it', () => {
    const reader = approvedReader('/home/user/widgets/');
    assert.deepEqual(touched(reader, 'Write', { file_path: '/home/user/widgets/src/greet.ts', content: '' }), ['src/greet.ts']);
    assert.deepEqual(touched(reader, 'Edit', { file_path: '/home/user/widgets/README.md' }), ['README.md']);
    assert.deepEqual(touched(reader, 'NotebookEdit', { notebook_path: '/home/user/widgets/n.ipynb' }), ['n.ipynb']);
  });

  it('a file outside it, a folder that only starts alike, and a log without an init keep the path as given', () => {
    const reader = approvedReader('/home/user/widgets');
    assert.deepEqual(touched(reader, 'Write', { file_path: '/tmp/scratch.ts' }), ['/tmp/scratch.ts']);
    assert.deepEqual(touched(reader, 'Write', { file_path: '/home/user/widgets2/a.ts' }), ['/home/user/widgets2/a.ts']);
    assert.deepEqual(touched(reader, 'Write', { file_path: '/home/user/widgets/' }), ['/home/user/widgets/']);
    assert.deepEqual(touched(approvedReader(undefined), 'Write', { file_path: '/home/user/widgets/a.ts' }), ['/home/user/widgets/a.ts']);
    assert.deepEqual(touched(approvedReader('relative/dir'), 'Write', { file_path: 'relative/dir/a.ts' }), ['relative/dir/a.ts']);
  });

  it('a later init (a new turn) names the folder from then on', () => {
    const reader = approvedReader('/home/user/widgets');
    reader.setWorkingFolder('/workspace/widgets');
    assert.deepEqual(touched(reader, 'Write', { file_path: '/workspace/widgets/a.ts' }), ['a.ts']);
    assert.deepEqual(touched(reader, 'Write', { file_path: '/home/user/widgets/a.ts' }), ['/home/user/widgets/a.ts']);
  });
});
