// The service's side of an agent launch (agentLaunch.ts): the agent it describes, made when a
// session starts or must start again.
import type { Agent, AgentContext, AgentFactory, AgentStartOptions } from '../../agents/agent';
import { createAcpAgentFactory } from '../../agents/acp/acpAgentFactory';
import { loadScenarioFile } from '../../agents/catalogue/scenario';
import { scriptedAgentFactory } from '../../agents/scripted/scriptedAgent';
import type { AgentLaunch } from '../../core/agentLaunch';
import type { AgentSandboxSettings } from '../../agents/sandbox/agentSandbox';
import { endsAfterApprovedResult } from './endsAfterApproval';

/** The agent a launch describes, for the service's host. Scenario files are read when it starts. */
export function agentFactoryFor(launch: AgentLaunch, log: (line: string) => void, sandbox?: AgentSandboxSettings): AgentFactory {
  switch (launch.kind) {
    case 'scripted':
      return deferredFactory(launch.label, () =>
        loadScenarioFile(launch.file).then((scenario) => scriptedAgentFactory(scenario, launch.label)),
      );
    case 'acp': {
      const agentLog = (line: string) => log(`agent ${launch.label}: ${line}`);
      // The ACP runtime is imported with the first agent (acpAgentFactory.ts).
      return deferredFactory(launch.label, async () =>
        endsAfterApprovedResult(
          await createAcpAgentFactory({
            argv: launch.argv,
            cwd: launch.cwd,
            label: launch.label,
            afterApproval: launch.afterApproval,
            outsideAccess: launch.outsideAccess,
            ...(launch.firstEventTimeoutMs !== undefined ? { firstEventTimeoutMs: launch.firstEventTimeoutMs } : {}),
            log: agentLog,
            ...(sandbox ? { sandbox } : {}),
          }),
          agentLog,
        ),
      );
    }
  }
}

/** A factory made on first use (once), whose agents are deferred until it is there. */
function deferredFactory(label: string, make: () => Promise<AgentFactory>): AgentFactory {
  let loading: Promise<AgentFactory> | undefined;
  return (options) => {
    loading ??= make();
    return deferredAgent(
      label,
      loading.then((factory) => factory(options)),
    );
  };
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
    get ended() {
      return inner?.ended === true;
    },
    start: async (ctx: AgentContext, prompt: string, options?: AgentStartOptions) => {
      const agent = await settled;
      if (!stopped) await agent.start(ctx, prompt, options);
    },
    resume: async (ctx: AgentContext, checkpoint: unknown) => {
      const agent = await settled;
      return !stopped && agent.resume ? agent.resume(ctx, checkpoint) : false;
    },
    onUserMessage: (text) => when((agent) => agent.onUserMessage(text)),
    carryOut: (prompt) => when((agent) => (agent.carryOut ? agent.carryOut(prompt) : agent.onUserMessage(prompt))),
    onDecision: (requestId, decision) => when((agent) => agent.onDecision(requestId, decision)),
    stop: async () => {
      stopped = true;
      const agent = await settled.catch(() => undefined);
      await agent?.stop();
    },
  };
}
