// The plan of an agent with no request to leave plan mode (AgentQuirks.planAtTurnEnd): at the end
// of a planning turn, the plan file it keeps when the turn changed it, else (an agent without a
// plan file) the turn's last words unless they ask a question.
import { readFileSync, statSync } from 'node:fs';
import type { TurnEndPlan } from '../quirks/agentQuirks';

/** A plan file larger than this is not a plan to review. */
const MAX_PLAN_BYTES = 1024 * 1024;

export interface TurnEndContext {
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  sessionId: string;
  /** The agent's last words in the turn. */
  lastText: string;
}

export type TurnEndOffer = { plan: string; from: string } | { none: string };

/** Whether words end by asking something: their last non-empty line ends with a question mark. */
export function endsWithQuestion(text: string): boolean {
  const last = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .at(-1);
  return last !== undefined && /\?[*_`)"'\s]*$/.test(last);
}

export class TurnEndPlans {
  readonly #quirk: TurnEndPlan;
  /** The text of the plan file when it was last offered: an unchanged file is no new plan. */
  #lastOffered: string | undefined;

  constructor(quirk: TurnEndPlan) {
    this.#quirk = quirk;
  }

  /** The plan a planning turn that ended normally offers, or why it offers none. */
  offer(context: TurnEndContext): TurnEndOffer {
    if (!this.#quirk.planFile) {
      const text = context.lastText.trim();
      if (!text) return { none: 'the turn ended without words' };
      if (endsWithQuestion(text)) return { none: 'the turn ended with a question' };
      return { plan: text, from: 'the turn’s last words' };
    }
    const file = this.#quirk.planFile(context);
    let text: string;
    try {
      if (statSync(file).size > MAX_PLAN_BYTES) return { none: `its plan file ${file} is larger than ${MAX_PLAN_BYTES} bytes` };
      text = readFileSync(file, 'utf8');
    } catch {
      return { none: `no plan file at ${file}` };
    }
    if (!text.trim()) return { none: `its plan file ${file} is empty` };
    if (text === this.#lastOffered) return { none: `its plan file ${file} did not change in this turn` };
    this.#lastOffered = text;
    return { plan: text, from: file };
  }
}
