// After Approve (ultraplan.afterApproval = default: edits approved manually) an ACP agent executes
// the plan and asks permission for each edit. Through the real SessionHost, InProcessBackend, poller
// and the fake agent program: the request shows up in the log as a can_use_tool control_request,
// the tracker the extension uses opens it, and the person's answer reaches the agent as the
// matching option; the turn then ends with its result.
import { strict as assert } from 'node:assert';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { SessionsError } from '../../src/core/errors';
import {
  PERMISSION_DENIED_MESSAGE,
  ToolPermissionTracker,
  permissionResponseEvent,
  type ToolPermissionRequest,
} from '../../src/core/permissionRequests';
import { followUntilResult, type PollRead } from '../../src/core/poller';
import { contentText } from '../../src/core/protocol';
import { chooseToolAllowOption, chooseToolRejectOption } from '../../src/agents/acp/planReview';
import { InProcessBackend } from '../../src/service/inProcessBackend';
import { SessionHost } from '../../src/service/host/sessionHost';
import { fakeRun, readAgentRecord, type FakeRun } from '../support/fakeAcpAgent';
import { allEvents, approveAsShown, createRequest, decideFirstPlan } from '../service/hostTestKit';
import { ORIGINAL_APP } from '../support/acpFixtures';
import { endFakeRun, fakeAgentFactory } from './fakeAgentKit';

const FAST = { pollIntervalMs: 50, timeoutMs: 15000 };

describe('ACP: permission requests while executing an approved plan', function () {
  this.timeout(25000);
  let run: FakeRun;
  let backend: InProcessBackend;
  let host: SessionHost;

  async function open(): Promise<void> {
    run = await fakeRun('execute-with-permission.json');
    host = new SessionHost({
      agentFactory: await fakeAgentFactory(run, { afterApproval: 'default' }),
    });
    backend = new InProcessBackend({ host, label: 'Embedded · Fake (ACP)' });
  }

  afterEach(async () => {
    await backend?.dispose();
    await endFakeRun(run);
  });

  /** Plans, approves, then follows the execution, answering each permission request with `answer`. */
  async function approveAndExecute(answer: 'allow' | 'deny') {
    const session = await backend.createSession(createRequest('Update app.ts'));
    // Fed the same batches as the scanner, through both loops, as the editor does.
    const tracker = new ToolPermissionTracker();
    const seen: ToolPermissionRequest[] = [];
    const answers: Array<Promise<void>> = [];
    const onPoll = (poll: PollRead): void => {
      for (const request of tracker.ingestParsed(poll.batch).opened) {
        seen.push(request);
        answers.push(
          backend.sendEvents(session.id, [permissionResponseEvent(request, answer)]).then(() => {
            tracker.markAnswered(request.requestId);
          }),
        );
      }
    };
    const approved = await decideFirstPlan(backend, session.id, FAST, approveAsShown, undefined, onPoll);
    assert.equal(approved.executionTarget, 'remote');
    assert.equal(seen.length, 0, 'nothing to answer while planning');
    const result = await followUntilResult({
      sessionId: session.id,
      transport: backend.transport,
      ...FAST,
      scanner: approved.scanner,
      initialCursor: approved.cursor,
      onPoll,
    });
    await Promise.all(answers);
    return { session, result, seen, tracker };
  }

  it('Allow: the edit request appears as can_use_tool, the agent gets the one-time allow option, edits, and the turn ends with success', async () => {
    await open();
    const { session, result, seen, tracker } = await approveAndExecute('allow');
    assert.equal(seen.length, 1, 'one permission request');
    const [request] = seen;
    assert.equal(request?.toolName, 'Edit src/app.ts');
    assert.equal(request?.toolUseId, 'edit-1');
    assert.equal(request?.summary, path.join(run.workspace, 'src/app.ts'));
    assert.deepEqual(request?.input, {
      file_path: path.join(run.workspace, 'src/app.ts'),
      old_string: 'export const original = true;',
      new_string: 'export const original = false;',
    });
    assert.equal(result.subtype, 'success');
    assert.equal(result.isError, false);
    assert.equal(result.result, 'Done: src/app.ts now says original = false.');
    assert.deepEqual(tracker.open, []);

    const record = readAgentRecord(run.record);
    const outcomes = record.filter((e) => e.kind === 'permission_outcome').map((e) => [e.toolCallId, e.outcome]);
    // The plan with manual edits ("default", never bypass), then the edit with the one-time "allow" (never "allow_always").
    assert.deepEqual(outcomes, [
      ['exit-1', 'default'],
      ['edit-1', 'allow'],
    ]);
    assert.equal(await readFile(path.join(run.workspace, 'src/app.ts'), 'utf8'), 'export const original = false;\n');

    // A second answer to the same request: the host refuses it (409), which the editor reads as answered elsewhere.
    await assert.rejects(
      backend.sendEvents(session.id, [permissionResponseEvent(request!, 'deny')]),
      (error: unknown) => error instanceof SessionsError && error.kind === 'conflict',
    );
  });

  it('Deny: the agent receives the one-time reject option, the edit is not made, the log shows the denial, and the turn ends', async () => {
    await open();
    const { session, result, seen } = await approveAndExecute('deny');
    assert.equal(seen.length, 1);
    assert.equal(result.subtype, 'success');
    assert.equal(result.result, 'Understood: I left src/app.ts unchanged.');
    const record = readAgentRecord(run.record);
    const outcomes = record.filter((e) => e.kind === 'permission_outcome').map((e) => [e.toolCallId, e.outcome]);
    assert.deepEqual(outcomes, [
      ['exit-1', 'default'],
      ['edit-1', 'reject'],
    ]);
    assert.equal(await readFile(path.join(run.workspace, 'src/app.ts'), 'utf8'), ORIGINAL_APP);
    // The denial is the tool's error result in the log, with our message.
    const denial = allEvents(host, session.id).flatMap((event) => {
      const e = event as unknown as { type: string; message?: { content?: unknown } };
      const content = e.type === 'user' ? e.message?.content : undefined;
      return Array.isArray(content)
        ? (content as Array<Record<string, unknown>>).filter((b) => b.type === 'tool_result' && b.tool_use_id === 'edit-1')
        : [];
    });
    assert.equal(denial.length, 1);
    assert.equal(denial[0]?.is_error, true);
    assert.equal(contentText(denial[0]?.content), PERMISSION_DENIED_MESSAGE);
  });
});

describe('ACP: the options a tool permission answer selects', () => {
  const claude = [
    { optionId: 'allow_always', name: 'Always Allow', kind: 'allow_always' },
    { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
    { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
  ] as const;

  it('Allow selects the one-time allow, never "always"; Deny the one-time reject', () => {
    const allow = chooseToolAllowOption('Fake', claude);
    assert.equal(allow.ok && allow.option.optionId, 'allow');
    const reject = chooseToolRejectOption('Fake', claude);
    assert.equal(reject.ok && reject.option.optionId, 'reject');
  });

  it('without a one-time allow nothing is allowed (an error naming the options); a permanent reject is the last resort for Deny', () => {
    const onlyAlways = [
      { optionId: 'always', name: 'Always Allow', kind: 'allow_always' },
      { optionId: 'never', name: 'Never', kind: 'reject_always' },
    ] as const;
    const allow = chooseToolAllowOption('Fake', onlyAlways);
    assert.equal(allow.ok, false);
    assert.match(!allow.ok ? allow.message : '', /one-time allow option.*"Always Allow" \(always, allow_always\)/);
    const reject = chooseToolRejectOption('Fake', onlyAlways);
    assert.equal(reject.ok && reject.option.optionId, 'never');
    assert.equal(chooseToolRejectOption('Fake', [{ optionId: 'y', name: 'Yes', kind: 'allow_once' }]).ok, false);
  });
});
