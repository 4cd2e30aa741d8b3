// A local-service ACP agent's process ends with its session's outcome: once the approved plan's
// turn has its `result`, nothing in the editor talks to that agent again (the review is finished),
// so leaving it idle would keep one agent process per finished session for the service's life.
// A message sent with or after the approval (the notes of Approve with Notes, an edited plan) is
// answered first: the process ends when, after the approved result, the agent reports itself idle
// (nothing left to prompt it with). Its saved state goes with it: a restarted service leaves the
// finished session alone. A later message (Continue after a verification) starts a fresh turn,
// carrying the conversation over (agentRestarts.ts), as for an agent that stopped.
import type { AnyEvent, PermissionDecision } from '../../core/protocol';
import type { Agent, AgentContext, AgentFactory } from '../../agents/agent';

export function endsAfterApprovedResult(factory: AgentFactory, log: (line: string) => void = () => {}): AgentFactory {
  return (options) => {
    const inner = factory(options);
    let approved = false;
    let ended = false;
    let approvedResult = false;

    const watch = (ctx: AgentContext): AgentContext => {
      const watched: AgentContext = {
        get sessionId() {
          return ctx.sessionId;
        },
        get signal() {
          return ctx.signal;
        },
        emit(event: AnyEvent) {
          ctx.emit(event);
          if (approved && event.type === 'result') approvedResult = true;
        },
        setStatus(status) {
          ctx.setStatus(status);
          if (approvedResult && !ended && status === 'idle') {
            ended = true;
            log(`session ${options.sessionId}: the approved plan's turn ended; stopping ${inner.label}`);
            // Nothing to resume after a restart of the service: without this, each restart would
            // start the agent of every finished session again, or report it stopped (a ghost
            // "agent stopped" on a finished session). A later message still starts a fresh turn.
            ctx.checkpoint?.(null);
            void inner.stop();
          }
        },
        log: (line) => ctx.log(line),
      };
      if (ctx.checkpoint) watched.checkpoint = (state) => ctx.checkpoint?.(state);
      return watched;
    };

    const agent: Agent = {
      get label() {
        return inner.label;
      },
      get ended() {
        return ended;
      },
      start: (ctx, prompt, startOptions) => {
        // A fresh turn that carries out an approved plan (its planning agent had stopped) ends like the approved turn.
        if (startOptions?.carryOut) approved = true;
        return inner.start(watch(ctx), prompt, startOptions);
      },
      onUserMessage: (text) => inner.onUserMessage(text),
      onDecision(requestId: string, decision: PermissionDecision) {
        // Before approval every control request is a plan review (tool permissions are refused
        // while planning), so the first allow is the plan's approval.
        if (decision.behavior === 'allow') approved = true;
        inner.onDecision(requestId, decision);
      },
      stop: () => inner.stop(),
    };
    if (inner.carryOut) {
      const carryOut = inner.carryOut.bind(inner);
      agent.carryOut = (prompt) => {
        approved = true;
        carryOut(prompt);
      };
    }
    if (inner.resume) {
      const resume = inner.resume.bind(inner);
      agent.resume = (ctx, checkpoint) => resume(watch(ctx), checkpoint);
    }
    return agent;
  };
}
