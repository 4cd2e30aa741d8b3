// What a session is for (src/core/sessionPurpose.ts): a review's runs are marked in their creation
// request, and the mark (or, for runs from before it, the fleet's title) is read back from a listing.
import { strict as assert } from 'node:assert';
import { CreateSessionRequestSchema, SessionResourceSchema } from '../../src/core/protocol';
import { WORKSPACE_KEY } from '../../src/core/agentLaunch';
import { SESSION_PURPOSE_KEY, asReviewRun, isReviewRunTitle, purposeOf, reviewRunTitle } from '../../src/core/sessionPurpose';

const listed = (title: string, context: Record<string, unknown> | null) =>
  SessionResourceSchema.parse({
    type: 'session',
    id: 'cse_1',
    title,
    session_status: 'idle',
    created_at: '2026-12-01T10:00:00Z',
    updated_at: '2026-12-01T10:00:00Z',
    session_context: context,
  });

describe('what a session is for', () => {
  it("marks a review's run in its creation request, keeping what the context held, and the request stays valid", () => {
    const request = asReviewRun({ title: reviewRunTitle('finder', 2), events: [], session_context: { [WORKSPACE_KEY]: '/w' } });
    assert.deepEqual(request.session_context, { [WORKSPACE_KEY]: '/w', [SESSION_PURPOSE_KEY]: 'review' });
    assert.equal(CreateSessionRequestSchema.safeParse(request).success, true);
    assert.equal(purposeOf(listed(request.title, request.session_context ?? null)), 'review');
  });

  it('reads a session without a mark (every planning session, and those from before the mark) as planning', () => {
    assert.equal(purposeOf(listed('ultraplan: add a toggle', null)), 'planning');
    assert.equal(purposeOf(listed('ultraplan: add a toggle', { [WORKSPACE_KEY]: '/w' })), 'planning');
    assert.equal(purposeOf(listed('ultraplan: add a toggle', { [SESSION_PURPOSE_KEY]: 'planning' })), 'planning');
    assert.equal(purposeOf(listed('ultraplan: add a toggle', { [SESSION_PURPOSE_KEY]: 42 })), 'planning');
  });

  it("knows the fleet's runs from before the mark by their titles, and only those", () => {
    assert.equal(purposeOf(listed('Ultrareview: finder 3', null)), 'review');
    assert.equal(purposeOf(listed('Ultrareview: verify 12', {})), 'review');
    assert.equal(isReviewRunTitle(reviewRunTitle('verify', 1)), true);
    for (const title of ['ultraplan: Ultrareview: finder 3', 'Ultrareview: finder', 'Ultrareview: finder 3 and more', 'review'])
      assert.equal(isReviewRunTitle(title), false, title);
  });
});
