// The service's side of an agent launch (agentLaunch.ts): the agent it describes, made when a
// session starts or must start again.
import type { Agent, AgentContext, AgentFactory } from '../agent';
import { createAcpAgentFactory } from '../acp';
import { loadScenarioFile, scriptedAgentFactory } from '../scriptedAgent';
import type { AgentLaunch } from './agentLaunch';
import { endsAfterApprovedResult } from './endsAfterApproval';

/** The agent a launch describes, for the service's host. Scenario files are read when it starts. */
export function agentFactoryFor(launch: AgentLaunch, log: (line: string) => void): AgentFactory {
  switch (launch.kind) {
    case 'scripted': {
      let loading: Promise<AgentFactory> | undefined;
      return (options) => {
        loading ??= loadScenarioFile(launch.file).then((scenario) => scriptedAgentFactory(scenario, launch.label));
        return deferredAgent(
          launch.label,
          loading.then((factory) => factory(options)),
        );
      };
    }
    case 'acp': {
      const agentLog = (line: string) => log(`agent ${launch.label}: ${line}`);
      return endsAfterApprovedResult(
        createAcpAgentFactory({
          argv: launch.argv,
          cwd: launch.cwd,
          label: launch.label,
          afterApproval: launch.afterApproval,
          outsideAccess: launch.outsideAccess,
          ...(launch.firstEventTimeoutMs !== undefined ? { firstEventTimeoutMs: launch.firstEventTimeoutMs } : {}),
          log: agentLog,
        }),
        agentLog,
      );
    }
  }
}

/**
 * An agent whose real one is still being made (a scenario file being read): starts and resumes
 * wait for it, messages and decisions that come first are handed over in order once it is there.
 */
export function deferredAgent(agentLabel: string, ready: Promise<Agent>): Agent {
  let inner: Agent | undefined;
  let stopped = false;
  const early: Array<(agent: Agent) => void> = [];
  const settled = ready.then((agent) => {
    inner = agent;
    for (const deliver of early.splice(0)) deliver(agent);
    return agent;
  });
  settled.catch(() => {});
  const when = (deliver: (agent: Agent) => void) => (inner ? deliver(inner) : early.push(deliver));
  return {
    label: agentLabel,
    start: async (ctx: AgentContext, prompt: string) => {
      const agent = await settled;
      if (!stopped) await agent.start(ctx, prompt);
    },
    resume: async (ctx: AgentContext, checkpoint: unknown) => {
      const agent = await settled;
      return !stopped && agent.resume ? agent.resume(ctx, checkpoint) : false;
    },
    onUserMessage: (text) => when((agent) => agent.onUserMessage(text)),
    onDecision: (requestId, decision) => when((agent) => agent.onDecision(requestId, decision)),
    stop: async () => {
      stopped = true;
      const agent = await settled.catch(() => undefined);
      await agent?.stop();
    },
  };
}
