// A session this window did not start (Attach, another window's): its identity from what the service
// returns, with the agent's name from the launch its creator sent, so prompts name the agent
// ("Ultraplan: Gemini CLI (ACP) asks permission") rather than "the agent on Embedded".
import { strict as assert } from 'node:assert';
import { withAgentLaunch } from '../../../src/core/agentLaunch';
import type { SessionResource } from '../../../src/core/protocol';
import { ARCHIVED_READ_ONLY, attachedSession } from '../../../src/extension/sessions/attachedSession';

function resource(over: Partial<SessionResource> = {}): SessionResource {
  return {
    type: 'session',
    id: 'session_01',
    title: 'Flip the flag',
    session_status: 'idle',
    created_at: '2026-12-03T00:00:00Z',
    updated_at: '2026-12-03T00:00:00Z',
    ...over,
  };
}

const launched = withAgentLaunch(
  { title: 'Flip the flag', events: [] },
  { kind: 'acp', argv: ['gemini', '--acp'], cwd: '/work/repo', label: 'Gemini CLI (ACP)', afterApproval: 'default', outsideAccess: 'ask' },
  '/work/repo',
).session_context;

describe('a session attached from the service', () => {
  it('names the agent its creator launched, and keeps the title and the server', () => {
    const fresh = attachedSession(resource({ session_context: launched }), 'server:session_01', 'http://127.0.0.1:9/');
    assert.deepEqual(fresh, {
      key: 'server:session_01',
      sessionId: 'session_01',
      title: 'Flip the flag',
      demo: false,
      serverUrl: 'http://127.0.0.1:9/',
      agentLabel: 'Gemini CLI (ACP)',
    });
  });

  it('has no agent name when the session carries no launch, or one this build cannot read', () => {
    assert.equal(attachedSession(resource(), 'embedded:session_01').agentLabel, undefined);
    const unreadable = { ultraplan_agent: { kind: 'acp', argv: [], label: 'Hostile' } };
    assert.equal(attachedSession(resource({ session_context: unreadable }), 'embedded:session_01').agentLabel, undefined);
  });

  it('an archived session is read-only, with the reason; a reason given by the caller wins', () => {
    assert.equal(attachedSession(resource({ session_status: 'archived' }), 'k').readOnly, ARCHIVED_READ_ONLY);
    assert.equal(
      attachedSession(resource({ session_status: 'archived' }), 'k', undefined, 'Read-only: no token').readOnly,
      'Read-only: no token',
    );
    assert.equal(attachedSession(resource(), 'k').readOnly, undefined);
  });
});
