// The findings the scripted models report on ReviewRepo's change (gitRepo.ts), and what their
// verifiers say: the off-by-one and the logged token are real, the division by zero is not.
import { json } from './reviewAgents';
import type { ModelReply } from '../modelApi/scenario';

export const OFF_BY_ONE = {
  file: 'src/app.ts',
  startLine: 3,
  endLine: 3,
  severity: 'major',
  title: 'Loop reads past the end of items',
  explanation: 'i <= items.length reads items[items.length], which is undefined, so the sum becomes NaN.',
  suggestedChange: '  for (let i = 0; i < items.length; i++) sum += items[i];',
};
export const DIVISION = {
  file: 'src/app.ts',
  startLine: 8,
  endLine: 8,
  severity: 'major',
  title: 'Division by zero for an empty list',
  explanation: 'items.length may be 0.',
};
export const TOKEN = {
  file: 'src/login.ts',
  startLine: 2,
  endLine: 2,
  severity: 'critical',
  title: 'The login token is written to the log',
  explanation: 'console.log prints the token in clear text.',
};

/** A verifier's reply on the finding titled `title`: the division is refuted, the rest confirmed. */
export function verdictFor(title: string): ModelReply {
  return title.startsWith('Division')
    ? json({ verdict: 'refuted', reason: 'average() returns 0 when items is empty: there is no division by zero.' })
    : json({ verdict: 'confirmed', reason: 'The code does what the finding says.' });
}
