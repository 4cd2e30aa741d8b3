// How a followed session on Claude Code on the web explains its failures: the service's own words
// (cause, fix, buttons) from ClaudeWebError, which login failures leave the remote session alone,
// and which decisions were not delivered. The followed session knows none of this wording.
import type * as vscode from 'vscode';
import { claudeWebFailureOf } from '../../client/claudeWeb';
import type { BackendVoice } from '../sessions/sessionNotifier';
import { isLoginFailure } from './claudeWebFailure';
import { executionReport, showBackendFailure } from './claudeWebUi';

export function claudeWebVoice(log: vscode.LogOutputChannel): BackendVoice {
  return {
    read(err) {
      const failure = claudeWebFailureOf(err);
      return {
        message: failure?.message,
        ownLogin: isLoginFailure(failure),
        decisionNotDelivered: failure?.reason === 'decision_not_delivered',
      };
    },
    show: (err, options) => showBackendFailure(err, { log, ...options }),
    executionReport: (backend, sessionId, texts) => executionReport(backend, sessionId, texts, log),
  };
}
