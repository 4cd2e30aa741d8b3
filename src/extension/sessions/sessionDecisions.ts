// A followed session's decisions and replies, sent to its backend by the core's PlanDecisions
// (src/core/sessionActs.ts, which the review page shares): refusals and failures are told to the
// person, in the backend's own words when it has them, and returned as the one answer.
import { PlanDecisions } from '../../core/sessionActs';
import { serverErrorReason } from '../../client/sessionsHttp';
import type { SessionPorts } from './permissionAnswers';

export class SessionDecisions extends PlanDecisions {
  constructor(ports: SessionPorts) {
    super({ ...ports, reasonOf: serverErrorReason });
  }
}
