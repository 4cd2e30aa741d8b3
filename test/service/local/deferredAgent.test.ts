// The local service's deferred agent (launchedAgent.ts) stands for the agent being made: what the
// host reads of it must be the made agent's, `ended` included, or a Continue after the approved
// outcome goes to an agent that ended (agentRuntime.ts starts a fresh turn only when it says so).
import { strict as assert } from 'node:assert';
import type { Agent } from '../../../src/agents/agent';
import { deferredAgent } from '../../../src/service/local/launchedAgent';

describe('deferredAgent', () => {
  it('says ended exactly when the agent it stands for does, and not before that agent is made', async () => {
    let ended = false;
    const messages: string[] = [];
    let make: (agent: Agent) => void = () => {};
    const made = new Promise<Agent>((resolve) => (make = resolve));
    const deferred = deferredAgent('Fake', made);
    assert.equal(deferred.ended, false, 'nothing has ended before the agent is made');
    deferred.onUserMessage('early');
    make({
      label: 'Fake',
      get ended() {
        return ended;
      },
      start: async () => {},
      onUserMessage: (text) => void messages.push(text),
      onDecision: () => {},
      stop: async () => {},
    });
    await made;
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(messages, ['early'], 'a message sent first is handed over');
    assert.equal(deferred.ended, false);
    ended = true;
    assert.equal(deferred.ended, true);
  });
});
