// The voice a session speaks with for failures and outcomes, by the backend it runs on: Claude Code
// on the web explains itself (claudeWeb/), Jules its refusals; the others say what their errors say, and report the
// pull request or branch an execution names in its own text.
import type * as vscode from 'vscode';
import type { BackendKind } from '../../core/backendKinds';
import { claudeWebVoice } from '../claudeWeb/claudeWebVoice';
import { julesVoice } from '../jules/julesVoice';
import { executionReport } from '../claudeWeb/claudeWebUi';
import { plainVoice, type BackendVoice } from '../sessions/sessionNotifier';

export function voiceFor(kind: BackendKind, log: vscode.LogOutputChannel): BackendVoice {
  if (kind === 'claude-web') return claudeWebVoice(log);
  if (kind === 'jules') return julesVoice;
  return { ...plainVoice, executionReport: (backend, sessionId, texts) => executionReport(backend, sessionId, texts, log) };
}
