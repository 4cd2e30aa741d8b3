// The prompt path people know from the terminal (docs/protocol.md section 7), for the places a prompt
// reaches Ultraplan in the editor: the keyword hints, what a request to the @ultraplan chat
// participant does, and the prompt that refines an existing plan (as Claude Code's "refine with
// Ultraplan" from its plan approval does: the draft goes up as the starting point). Pure.
import { hasUltraplanKeyword, hasUltrareviewKeyword, replaceUltraplanKeyword } from './keyword';

export const ULTRAREVIEW_HINT =
  '"ultrareview" starts a verified review of your changes (Ultraplan: Review Changes…): agents find issues, others verify them, findings open as comment threads.';

/** A plan larger than this is refused for refinement (it would not fit a prompt sensibly). */
export const REFINE_PLAN_MAX_CHARS = 200_000;

/** `ultrareview` typed as an invocation, without `ultraplan`: the person asks for a review, not a plan. */
export function isReviewRequest(text: string): boolean {
  return hasUltrareviewKeyword(text) && !hasUltraplanKeyword(text);
}

/** The prompt as sent: the first keyword replaced (section 7), or the text as typed; trimmed. */
export function promptFromText(text: string): string {
  return (hasUltraplanKeyword(text) ? replaceUltraplanKeyword(text) : text).trim();
}

/** The hints shown while a prompt is typed: what the keyword does, and that `ultrareview` starts a review. */
export function keywordHints(text: string, previewChars = 80): string[] {
  if (text.trim().length === 0) return [];
  const hints: string[] = [];
  if (hasUltraplanKeyword(text)) {
    const sent = replaceUltraplanKeyword(text);
    hints.push(
      sent
        ? `"ultraplan" is the launch keyword; the agent receives: ${sent.length > previewChars ? `${sent.slice(0, previewChars - 1)}…` : sent}`
        : 'Only the keyword: describe the task to plan.',
    );
  }
  if (hasUltrareviewKeyword(text)) hints.push(ULTRAREVIEW_HINT);
  return hints;
}

export type ChatRequestAction =
  /** Start a planning session with this prompt. */
  | { kind: 'launch'; prompt: string }
  /** `ultrareview` without `ultraplan`: a review of the changes, not a planning session. */
  | { kind: 'review'; message: string }
  /** Nothing to plan: say how to use the participant. */
  | { kind: 'usage'; message: string };

export const CHAT_USAGE =
  'Describe the task to plan, e.g. `@ultraplan add rate limiting to the public API`. An agent plans it in plan mode and the plan opens in the review panel for you to approve, reject, edit or teleport.';

/**
 * What a request to @ultraplan does. Addressing the participant is itself the invocation, so any
 * task launches; the keyword, when typed too, is replaced as in the terminal. `ultrareview` alone
 * starts a review of the changes instead (docs/review.md).
 */
export function chatRequestAction(text: string): ChatRequestAction {
  const trimmed = text.trim();
  if (trimmed.length === 0) return { kind: 'usage', message: CHAT_USAGE };
  if (isReviewRequest(trimmed)) return { kind: 'review', message: ULTRAREVIEW_HINT };
  const prompt = promptFromText(trimmed);
  if (prompt.length === 0) return { kind: 'usage', message: `Only the keyword: ${CHAT_USAGE}` };
  return { kind: 'launch', prompt };
}

/** The plan's own title: its first heading (without "Plan:"), else its first line. */
export function planTitle(plan: string): string {
  const lines = plan
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const heading = lines.find((l) => /^#{1,6}\s+\S/.test(l));
  const raw = (heading ?? lines[0] ?? 'plan')
    .replace(/^#{1,6}\s+/, '')
    .replace(/^plan\s*:\s*/i, '')
    .trim();
  return raw.length > 70 ? `${raw.slice(0, 69)}…` : raw || 'plan';
}

export type RefinePlanInput = { ok: true; prompt: string } | { ok: false; message: string };

/**
 * The prompt of a session that refines an existing plan: the plan is the starting point, to be
 * checked against the repository and improved, then presented for review like any other plan.
 * Its first line names the plan, so the session's title does too.
 */
export function refinePlanPrompt(plan: string, source: string): RefinePlanInput {
  const text = plan.replace(/\r\n/g, '\n').trim();
  if (text.length === 0) return { ok: false, message: `${source} is empty: there is no plan to refine.` };
  if (text.length > REFINE_PLAN_MAX_CHARS) {
    return {
      ok: false,
      message: `${source} has ${text.length.toLocaleString('en-US')} characters; plans up to ${REFINE_PLAN_MAX_CHARS.toLocaleString('en-US')} can be refined.`,
    };
  }
  const prompt = [
    `Refine the plan "${planTitle(text)}".`,
    `The draft below (from ${source}) is a starting point, not a settled decision: check it against the repository, correct`,
    'what is wrong, add what is missing, drop what is not needed and keep what holds up. Ask if something',
    'essential is unclear. Then present the refined plan for review.',
    '',
    '<draft-plan>',
    text,
    '</draft-plan>',
  ].join('\n');
  return { ok: true, prompt };
}
