// Qwen Code's exit-plan options, as its 0.24.4 package builds them (toPermissionOptions, case
// "plan"), and what Approve and Reject select among them for each ultraplan.afterApproval.
import { strict as assert } from 'node:assert';
import type { PermissionOption } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { chooseQuirks } from '../../src/agents/quirks/chooseQuirks';
import { QWEN_QUIRKS } from '../../src/agents/quirks/qwen';

const EXIT_OPTIONS: PermissionOption[] = [
  { optionId: 'restore_previous', name: 'Yes, restore previous mode (auto)', kind: 'allow_once' },
  { optionId: 'proceed_always', name: 'Yes, and auto-accept edits', kind: 'allow_always' },
  { optionId: 'proceed_once', name: 'Yes, and manually approve edits', kind: 'allow_once' },
  { optionId: 'cancel', name: 'No, keep planning (esc)', kind: 'reject_once' },
];
const MODES = ['plan', 'default', 'auto-edit', 'auto', 'yolo'];

function chosen(choice: ReturnType<typeof QWEN_QUIRKS.approval>['choice']): string {
  assert.ok(choice.ok, choice.ok ? '' : choice.message);
  return choice.option.optionId;
}

describe("Qwen Code's quirks", () => {
  it('are chosen by the name its initialize gives', () => {
    assert.equal(chooseQuirks({ name: 'qwen-code', version: '0.24.4' }), QWEN_QUIRKS);
  });

  it('Approve never hands the decisions back to the mode before plan (restore_previous: its classifier)', () => {
    const label = 'Qwen Code (ACP)';
    assert.equal(chosen(QWEN_QUIRKS.approval(label, EXIT_OPTIONS, 'default').choice), 'proceed_once');
    assert.equal(chosen(QWEN_QUIRKS.approval(label, EXIT_OPTIONS, 'acceptEdits').choice), 'proceed_always');
    const bypass = QWEN_QUIRKS.approval(label, EXIT_OPTIONS, 'bypassPermissions');
    assert.equal(chosen(bypass.choice), 'proceed_once');
    assert.equal(bypass.modeAfterExitTool, 'yolo');
    // Without the manual option, the only allow left is restore_previous: refused, with what was offered.
    const onlyRestore = QWEN_QUIRKS.approval(label, [EXIT_OPTIONS[0]!, EXIT_OPTIONS[3]!], 'default').choice;
    assert.equal(onlyRestore.ok, false);
  });

  it('Reject keeps planning; a fresh turn carries out in the mode ultraplan.afterApproval names', () => {
    const reject = QWEN_QUIRKS.rejectOption('Qwen Code (ACP)', EXIT_OPTIONS);
    assert.ok(reject.ok);
    assert.equal(reject.option.optionId, 'cancel');
    assert.equal(QWEN_QUIRKS.carryOutMode('default', MODES), 'default');
    assert.equal(QWEN_QUIRKS.carryOutMode('acceptEdits', MODES), 'auto-edit');
    assert.equal(QWEN_QUIRKS.carryOutMode('bypassPermissions', MODES), 'yolo');
    assert.equal(QWEN_QUIRKS.carryOutMode('acceptEdits', ['plan', 'default']), undefined);
    assert.equal(QWEN_QUIRKS.loadsSessions, true);
  });
});
