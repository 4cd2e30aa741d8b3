// The voice a session speaks with for failures and outcomes, by the backend it runs on: Claude Code
// on the web explains itself (claudeWeb/); the others say what their errors say, and report the
// pull request or branch an execution names in its own text.
import type * as vscode from 'vscode';
import type { BackendKind } from '../../sessions/backend';
import { claudeWebVoice } from '../claudeWeb/claudeWebVoice';
import { executionReport } from '../claudeWeb/claudeWebUi';
import { plainVoice, type BackendVoice } from '../sessions/sessionNotifier';

export function voiceFor(kind: BackendKind, log: vscode.LogOutputChannel): BackendVoice {
  if (kind === 'claude-web') return claudeWebVoice(log);
  return { ...plainVoice, executionReport: (backend, sessionId, texts) => executionReport(backend, sessionId, texts, log) };
}
