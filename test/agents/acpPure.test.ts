// The pure pieces of the ACP runner: plan mode choice, plan review options, read-only policy,
// the event translator, the JSON line guard, and known agents detection.
import { strict as assert } from 'node:assert';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { PermissionOption } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { jsonLineGuard } from '../../src/agents/acp/agentProcess';
import { labelFromArgv } from '../../src/agents/catalogue/agentLabel';
import { AcpEventTranslator } from '../../src/agents/acp/eventTranslator';
import {
  detectCustomAgent,
  detectKnownAgents,
  findOnPath,
  resolveAgentCommand,
  splitCommandLine,
} from '../../src/agents/catalogue/knownAgents';
import { choosePlanMode, modeFromUpdate } from '../../src/agents/acp/planMode';
import {
  answerQuestion,
  questionForm,
  chooseApproveOption,
  chooseRejectOption,
  isPlanExitRequest,
  planReviewForm,
  planSource,
} from '../../src/agents/acp/planReview';
import { looksLikePlanFile, writeVerdict } from '../../src/agents/acp/readOnlyPolicy';
import type { AnyEvent } from '../../src/core/protocol';
import { GEMINI_OPTIONS } from '../support/acpFixtures';

const CLAUDE_OPTIONS: PermissionOption[] = [
  { optionId: 'bypassPermissions', name: 'Yes, and bypass permissions', kind: 'allow_always' },
  { optionId: 'acceptEdits', name: 'Yes, and auto-accept edits', kind: 'allow_always' },
  { optionId: 'default', name: 'Yes, and manually approve edits', kind: 'allow_once' },
  { optionId: 'plan', name: 'No, keep planning', kind: 'reject_once' },
];

describe('ACP pure pieces', () => {
  describe('choosePlanMode', () => {
    it("finds Copilot CLI's plan mode, whose ids are URLs (its session/new answer, 1.0.102)", () => {
      const url = (mode: string) => `https://agentclientprotocol.com/protocol/session-modes#${mode}`;
      const modes = [
        { id: url('agent'), name: 'Agent' },
        { id: url('plan'), name: 'Plan' },
        { id: url('autopilot'), name: 'Autopilot' },
      ];
      assert.deepEqual(choosePlanMode('Copilot CLI (ACP)', { modes: { currentModeId: url('agent'), availableModes: modes } }), {
        ok: true,
        target: { via: 'mode', modeId: url('plan'), name: 'Plan' },
      });
      // The URL's fragment decides, not a host that happens to say plan.
      const planHost = [{ id: 'https://planner.example/modes#agent', name: 'Agent' }, ...modes];
      assert.deepEqual(choosePlanMode('A', { modes: { currentModeId: url('agent'), availableModes: planHost } }), {
        ok: true,
        target: { via: 'mode', modeId: url('plan'), name: 'Plan' },
      });
    });

    it('prefers the mode with id plan, then one whose id or name says plan', () => {
      assert.deepEqual(
        choosePlanMode('A', {
          modes: {
            currentModeId: 'x',
            availableModes: [
              { id: 'architect', name: 'Plan-ish' },
              { id: 'plan', name: 'P' },
            ],
          },
        }),
        { ok: true, target: { via: 'mode', modeId: 'plan', name: 'P' } },
      );
      assert.deepEqual(
        choosePlanMode('A', {
          modes: {
            currentModeId: 'x',
            availableModes: [
              { id: 'ask', name: 'Ask' },
              { id: 'm2', name: 'Planning' },
            ],
          },
        }),
        { ok: true, target: { via: 'mode', modeId: 'm2', name: 'Planning' } },
      );
    });

    it('falls back to the `mode` config option when the agent advertises no modes', () => {
      const choice = choosePlanMode('A', {
        configOptions: [
          { id: 'model', name: 'Model', type: 'select', currentValue: 'x', options: [{ value: 'plan-model', name: 'not a mode' }] },
          {
            id: 'mode',
            name: 'Mode',
            type: 'select',
            currentValue: 'default',
            options: [
              { value: 'default', name: 'Default' },
              { value: 'plan', name: 'Plan' },
            ],
          },
        ],
      });
      assert.deepEqual(choice, { ok: true, target: { via: 'config_option', configId: 'mode', value: 'plan', name: 'Plan' } });
    });

    it('without a plan mode, names the agent and what it offers', () => {
      const choice = choosePlanMode('Gemini CLI (ACP)', {
        modes: {
          currentModeId: 'default',
          availableModes: [
            { id: 'default', name: 'Default' },
            { id: 'yolo', name: 'YOLO' },
          ],
        },
      });
      assert.equal(choice.ok, false);
      assert.match(
        !choice.ok ? choice.message : '',
        /^Gemini CLI \(ACP\) has no plan mode.*Modes it offers: default \("Default"\), yolo \("YOLO"\)/,
      );
      const none = choosePlanMode('X', {});
      assert.match(!none.ok ? none.message : '', /Modes it offers: none/);
    });

    it('reads the mode from current_mode_update and from a config_option_update of `mode`', () => {
      assert.equal(modeFromUpdate({ sessionUpdate: 'current_mode_update', currentModeId: 'plan' }), 'plan');
      assert.equal(
        modeFromUpdate({
          sessionUpdate: 'config_option_update',
          configOptions: [{ id: 'mode', name: 'Mode', type: 'select', currentValue: 'acceptEdits', options: [] }],
        }),
        'acceptEdits',
      );
      assert.equal(
        modeFromUpdate({
          sessionUpdate: 'config_option_update',
          configOptions: [{ id: 'model', name: 'Model', type: 'select', currentValue: 'x', options: [] }],
        }),
        undefined,
      );
      assert.equal(modeFromUpdate({ sessionUpdate: 'agent_message_chunk' }), undefined);
    });
  });

  describe('plan review', () => {
    it('recognises exit requests of the three shapes, and not an ordinary edit', () => {
      assert.ok(isPlanExitRequest({ toolCall: { toolCallId: 'a', rawInput: { plan: 'p' } }, options: [] }));
      assert.ok(isPlanExitRequest({ toolCall: { toolCallId: 'a', title: 'Implement this plan?' }, options: [] }));
      assert.ok(isPlanExitRequest({ toolCall: { toolCallId: 'a', kind: 'switch_mode' }, options: [] }));
      assert.ok(
        !isPlanExitRequest({
          toolCall: { toolCallId: 'a', title: 'Edit src/a.ts', kind: 'edit' },
          options: [CLAUDE_OPTIONS[2] as PermissionOption],
        }),
      );
    });

    it('finds the plan in rawInput.plan, else the text content, else the named file', () => {
      assert.deepEqual(planSource({ rawInput: { plan: '# P' } }), { kind: 'text', text: '# P' });
      assert.deepEqual(planSource({ content: [{ type: 'content', content: { type: 'text', text: '# T' } }] }), {
        kind: 'text',
        text: '# T',
      });
      assert.deepEqual(planSource({ rawInput: { plan_path: '/w/plans/a.md' } }), { kind: 'file', path: '/w/plans/a.md' });
      assert.deepEqual(planSource({ locations: [{ path: '/w/PLAN.md' }] }), { kind: 'file', path: '/w/PLAN.md' });
      assert.deepEqual(planSource({}), { kind: 'none' });
    });

    it('Approve: default picks manual approval, acceptEdits picks auto-accept, neither ever picks bypass', () => {
      const manual = chooseApproveOption('C', CLAUDE_OPTIONS, 'default');
      assert.equal(manual.ok && manual.option.optionId, 'default');
      const auto = chooseApproveOption('C', CLAUDE_OPTIONS, 'acceptEdits');
      assert.equal(auto.ok && auto.option.optionId, 'acceptEdits');
      const bypass = chooseApproveOption('C', CLAUDE_OPTIONS, 'bypassPermissions');
      assert.equal(bypass.ok && bypass.option.optionId, 'bypassPermissions');
      // Only a bypass and a reject on offer: default refuses rather than bypass.
      const onlyBypass = chooseApproveOption(
        'C',
        [CLAUDE_OPTIONS[0] as PermissionOption, CLAUDE_OPTIONS[3] as PermissionOption],
        'default',
      );
      assert.equal(onlyBypass.ok, false);
      assert.match(
        !onlyBypass.ok ? onlyBypass.message : '',
        /C offered: "Yes, and bypass permissions" \(bypassPermissions, allow_always\), "No, keep planning"/,
      );
    });

    it("Approve on the options of Claude's adapter 0.101 (auto mode, clear context, bypass): manual by default, never auto or bypass", () => {
      const options: PermissionOption[] = [
        { optionId: 'exit-plan-clear-auto', name: 'Yes, clear context (12% used) and use auto mode', kind: 'allow_always' },
        { optionId: 'exit-plan-auto', name: 'Yes, and use auto mode', kind: 'allow_always' },
        { optionId: 'exit-plan-bypass', name: 'Yes, and bypass permissions', kind: 'allow_always' },
        { optionId: 'exit-plan-default', name: 'Yes, manually approve edits', kind: 'allow_once' },
        { optionId: 'reject', name: 'No, keep planning', kind: 'reject_once' },
      ];
      const manual = chooseApproveOption('C', options, 'default');
      assert.equal(manual.ok && manual.option.optionId, 'exit-plan-default');
      // No auto-accept option here (the agent then switches mode itself, see AcpAgent).
      assert.equal(chooseApproveOption('C', options, 'acceptEdits').ok, false);
      const bypass = chooseApproveOption('C', options, 'bypassPermissions');
      assert.equal(bypass.ok && bypass.option.optionId, 'exit-plan-bypass');
      const reject = chooseRejectOption('C', options);
      assert.equal(reject.ok && reject.option.optionId, 'reject');
      const withAccept = chooseApproveOption(
        'C',
        [
          { optionId: 'exit-plan-clear-accept-edits', name: 'Yes, clear context and auto-accept edits', kind: 'allow_always' },
          { optionId: 'exit-plan-accept-edits', name: 'Yes, auto-accept edits', kind: 'allow_always' },
          ...options.slice(3),
        ],
        'acceptEdits',
      );
      assert.equal(withAccept.ok && withAccept.option.optionId, 'exit-plan-accept-edits');
    });

    it('Approve on Allow/Reject (Gemini) takes the plain allow; acceptEdits there is an error', () => {
      const manual = chooseApproveOption('G', GEMINI_OPTIONS, 'default');
      assert.equal(manual.ok && manual.option.optionId, 'proceed_once');
      assert.equal(chooseApproveOption('G', GEMINI_OPTIONS, 'acceptEdits').ok, false);
    });

    it('Reject prefers "keep planning", else a one-time reject; none is an error', () => {
      const keep = chooseRejectOption('C', CLAUDE_OPTIONS);
      assert.equal(keep.ok && keep.option.optionId, 'plan');
      const once = chooseRejectOption('X', [
        { optionId: 'never', name: 'Never', kind: 'reject_always' },
        { optionId: 'no', name: 'No', kind: 'reject_once' },
      ]);
      assert.equal(once.ok && once.option.optionId, 'no');
      const none = chooseRejectOption('X', [{ optionId: 'y', name: 'Yes', kind: 'allow_once' }]);
      assert.match(!none.ok ? none.message : '', /Reject needs a reject option, but X offered: "Yes"/);
    });

    it('reads an Approve / Keep planning elicitation with free text, and ignores other questions', () => {
      const form = planReviewForm({
        sessionId: 's',
        mode: 'form',
        message: 'Review',
        toolCallId: 't1',
        requestedSchema: {
          type: 'object',
          properties: {
            choice: { type: 'string', enum: ['Approve', 'Keep planning'] },
            note: { type: 'string', title: 'Feedback' },
          },
        },
      });
      assert.deepEqual(form, {
        choiceKey: 'choice',
        approveValue: 'Approve',
        keepPlanningValue: 'Keep planning',
        feedbackKey: 'note',
        toolCallId: 't1',
      });
      assert.equal(
        planReviewForm({
          sessionId: 's',
          mode: 'form',
          message: 'Pick a color',
          requestedSchema: { type: 'object', properties: { c: { type: 'string', enum: ['red', 'blue'] } } },
        }),
        undefined,
      );
    });
  });

  describe('questions', () => {
    const form = questionForm({
      sessionId: 's',
      mode: 'form',
      message: 'Which one?',
      requestedSchema: {
        type: 'object',
        properties: {
          question_0: {
            type: 'string',
            oneOf: [
              { const: 'a', title: 'Option A' },
              { const: 'b', title: 'Option B' },
            ],
          },
          question_0_custom: { type: 'string', title: 'Other' },
        },
      },
    });
    it('shows the message and the choices, and maps a reply to a choice or to the free text', () => {
      assert.equal(form?.text, 'Which one?\n- Option A\n- Option B');
      assert.deepEqual(form && answerQuestion(form, ' option b '), { question_0: 'b' });
      assert.deepEqual(form && answerQuestion(form, 'Neither, use C'), { question_0_custom: 'Neither, use C' });
    });
    it('a URL elicitation is not a question form', () => {
      assert.equal(
        questionForm({ sessionId: 's', mode: 'url', message: 'Open', url: 'https://x', elicitationId: 'e' } as never),
        undefined,
      );
    });
  });

  describe('read-only policy', () => {
    const workspace = '/work/ws';
    const home = '/home/u';
    const file = { symlink: false, regular: true, links: 1 };
    const verdict = (filePath: string, planning: boolean, existing: typeof file | null = null, created: string[] = []) =>
      writeVerdict({ filePath, workspace, planning, sessionPlanFiles: new Set(created), existing, home }).allowed;

    it('while planning, only a new plan file, or one this session created, may be written', () => {
      assert.equal(verdict('/work/ws/src/a.ts', true), false);
      assert.equal(verdict('/work/ws/PLAN.md', true), true);
      assert.equal(verdict('/work/ws/PLAN.md', true, file), false);
      assert.equal(verdict('/work/ws/PLAN.md', true, file, ['/work/ws/PLAN.md']), true);
      assert.equal(verdict('/home/u/.gemini/tmp/project/session-1/plans/x.md', true, file), true);
      assert.equal(verdict('/home/u/.claude/plans/lively-otter.md', true, file), true);
      assert.equal(verdict('relative/PLAN.md', true), false);
      assert.ok(!looksLikePlanFile('/work/ws/plan.ts'));
      assert.ok(!looksLikePlanFile('/work/ws/plans/../src/a.md'));
    });

    it('a file the agent names as its plan is not writable for being named: notes.txt stays read-only', () => {
      // The exit request naming a "plan file" comes from the agent itself; naming grants nothing.
      assert.equal(verdict('/work/ws/notes.txt', true, file), false);
      assert.equal(verdict('/work/ws/notes.txt', true), false);
    });

    it('after approval, writes inside the workspace only', () => {
      assert.equal(verdict('/work/ws/src/a.ts', false, file), true);
      const outside = writeVerdict({
        filePath: '/work/other/a.ts',
        workspace,
        planning: false,
        sessionPlanFiles: new Set(),
        existing: null,
        home,
      });
      assert.match(!outside.allowed ? outside.message : '', /outside the workspace/);
    });
  });

  describe('AcpEventTranslator', () => {
    it("keeps a notice sent without a message id (Claude's adapter) apart from the model's text around it", () => {
      const events: AnyEvent[] = [];
      const translator = new AcpEventTranslator((event) => events.push(event));
      translator.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Planning.' }, messageId: 'm1' });
      translator.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '**Warning:** a notice' } });
      translator.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Done.' }, messageId: 'm2' });
      translator.flush();
      const texts = events.map((event) => (event as unknown as { message: { content: Array<{ text: string }> } }).message.content[0]?.text);
      assert.deepEqual(texts, ['Planning.', '**Warning:** a notice', 'Done.']);
    });

    it('coalesces chunks per message id, flushes on tool calls, and emits one result per tool call', () => {
      const events: AnyEvent[] = [];
      const translator = new AcpEventTranslator((event) => events.push(event));
      translator.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hel' }, messageId: 'm1' });
      translator.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'lo' }, messageId: 'm1' });
      translator.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Next' }, messageId: 'm2' });
      translator.update({ sessionUpdate: 'tool_call', toolCallId: 't', title: 'ExitPlanMode', kind: 'switch_mode' });
      translator.update({ sessionUpdate: 'tool_call_update', toolCallId: 't', status: 'failed', rawOutput: { error: 'x' } });
      translator.update({ sessionUpdate: 'tool_call_update', toolCallId: 't', status: 'failed' });
      translator.update({ sessionUpdate: 'tool_call_update', toolCallId: 'u', title: 'Late', status: 'completed' });
      const blocks = events.map((event) => JSON.stringify((event as unknown as { message: { content: unknown } }).message.content));
      assert.deepEqual(blocks, [
        '[{"type":"text","text":"Hello"}]',
        '[{"type":"text","text":"Next"}]',
        // The agent's own tool call never takes the name the scanner reads as a plan.
        '[{"type":"tool_use","id":"t","name":"ExitPlanMode (agent tool call)","input":{}}]',
        '[{"type":"tool_result","tool_use_id":"t","content":"{\\"error\\":\\"x\\"}","is_error":true}]',
        '[{"type":"tool_use","id":"u","name":"Late","input":{}}]',
        '[{"type":"tool_result","tool_use_id":"u","content":"done","is_error":false}]',
      ]);
      assert.equal(translator.lastAssistantText, 'Next');
    });
  });

  describe('jsonLineGuard', () => {
    async function pass(chunks: string[]): Promise<{ out: string; malformed: string[] }> {
      const malformed: string[] = [];
      const encoder = new TextEncoder();
      const source = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
          controller.close();
        },
      });
      let out = '';
      const reader = source.pipeThrough(jsonLineGuard((line) => malformed.push(line))).getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        out += decoder.decode(value);
      }
      return { out, malformed };
    }

    it('passes JSON lines split across chunks and stops at the first line that is not JSON', async () => {
      const { out, malformed } = await pass(['{"a":', '1}\n\n{"b":2}\nnot json\n{"c":3}\n']);
      assert.equal(out, '{"a":1}\n{"b":2}\n');
      assert.deepEqual(malformed, ['not json']);
    });
  });

  describe('known agents', () => {
    let bin: string;
    before(async () => {
      bin = await mkdtemp(path.join(tmpdir(), 'ultraplan-bin-'));
      await mkdir(bin, { recursive: true });
      for (const name of ['gemini', 'npx']) {
        await writeFile(path.join(bin, name), '#!/bin/sh\nexit 0\n');
        await chmod(path.join(bin, name), 0o755);
      }
      await writeFile(path.join(bin, 'codex-acp'), 'not executable');
    });
    after(() => rm(bin, { recursive: true, force: true }));

    it('detects by PATH only: installed, through npx, or missing', () => {
      const env = { PATH: bin };
      const detected = Object.fromEntries(detectKnownAgents(env).map((agent) => [agent.id, agent]));
      assert.equal(detected.gemini?.availability, 'installed');
      assert.deepEqual(detected.gemini?.argv, ['gemini', '--acp']);
      assert.equal(detected.claude?.availability, 'npx');
      assert.deepEqual(detected.claude?.argv, ['npx', '-y', '@agentclientprotocol/claude-agent-acp@0.101.0']);
      // Present but not executable does not count.
      assert.equal(detected.codex?.availability, 'npx');
      assert.deepEqual(detected.codex?.argv, ['npx', '-y', '@agentclientprotocol/codex-acp@2.6.0']);
      const none = Object.fromEntries(detectKnownAgents({ PATH: '' }).map((agent) => [agent.id, agent.availability]));
      assert.deepEqual(none, {
        claude: 'missing',
        gemini: 'missing',
        codex: 'missing',
        qwen: 'missing',
        copilot: 'missing',
        opencode: 'missing',
      });
      assert.deepEqual(detected.qwen?.argv, ['npx', '-y', '@qwen-code/qwen-code@0.24.4', '--acp']);
      assert.deepEqual(detected.copilot?.argv, ['npx', '-y', '@github/copilot@1.0.102', '--acp']);
      assert.deepEqual(detected.opencode?.argv, ['npx', '-y', 'opencode-ai@1.18.33', 'acp']);
      assert.equal(findOnPath('codex-acp', env), undefined);
      assert.equal(detectCustomAgent(['gemini', '--experimental-acp'], env).availability, 'installed');
      assert.equal(detectCustomAgent(['nope'], env).availability, 'missing');
    });

    it('splits command lines without a shell and resolves known ids', () => {
      assert.deepEqual(splitCommandLine(`npx -y "@scope/pkg"  --flag='a b' c\\ d`), ['npx', '-y', '@scope/pkg', '--flag=a b', 'c d']);
      assert.deepEqual(splitCommandLine(`a "" b`), ['a', '', 'b']);
      assert.throws(() => splitCommandLine('a "b'), /unclosed " quote/);
      assert.deepEqual(resolveAgentCommand('gemini', { PATH: bin }), { argv: ['gemini', '--acp'], label: 'Gemini CLI (ACP)' });
      assert.deepEqual(resolveAgentCommand('npx -y @agentclientprotocol/claude-agent-acp', { PATH: '' }).label, 'Claude (ACP)');
      assert.equal(resolveAgentCommand('/usr/bin/node /cache/node_modules/.bin/qwen --acp', { PATH: '' }).label, 'Qwen Code (ACP)');
      assert.equal(resolveAgentCommand('/usr/bin/node /x/agent.mjs qwen', { PATH: '' }).label, 'agent.mjs (ACP)');
      assert.equal(labelFromArgv(['/usr/bin/node', '/x/agent.mjs']), 'agent.mjs (ACP)');
      assert.throws(() => resolveAgentCommand('  '), /acp needs a command/);
    });
  });
});
