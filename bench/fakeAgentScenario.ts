// The fake ACP agent's scenario the ACP benches share: one turn that plans, waits, then asks to
// exit plan mode the way Claude's adapter does (plan in rawInput.plan, manual-edits and
// keep-planning options).
import { DEFAULT_AND_PLAN_MODES } from '../test/support/acpFixtures';

/** A scenario whose exit-plan permission request comes `delayMs` after the prompt. */
export function exitPlanScenario(delayMs: number, toolCallId = 'exit-1'): object {
  return {
    modes: DEFAULT_AND_PLAN_MODES,
    turns: [
      [
        { chunk: 'Planning.' },
        { sleep: delayMs },
        {
          permission: {
            toolCall: { toolCallId, title: 'Ready to code?', kind: 'switch_mode', rawInput: { plan: '# Bench plan\n\n1. Step' } },
            options: [
              { optionId: 'default', name: 'Yes, and manually approve edits', kind: 'allow_once' },
              { optionId: 'plan', name: 'No, keep planning', kind: 'reject_once' },
            ],
          },
        },
      ],
    ],
  };
}
