import assert from 'node:assert/strict';
import { describeExecutionReport, findExecutionReport, outcomeBranches } from '../../../src/extension/claudeWeb/claudeWebOutcome';

const context = (branches: string[]) => ({
  sources: [{ type: 'git_repository', url: 'https://github.com/acme/widgets' }],
  outcomes: [{ type: 'git_repository', git_info: { type: 'github', repo: 'acme/widgets', branches } }],
});

describe('what an approved session reports at its end', () => {
  it('finds the pull request and the claude/ branch the result names', () => {
    const report = findExecutionReport([
      'Done. Opened https://github.com/acme/widgets/pull/42. Branch `claude/add-a-changelog-1a2b3`.',
      null,
    ]);
    assert.deepEqual(report.pullRequests, ['https://github.com/acme/widgets/pull/42']);
    assert.deepEqual(report.branches, [{ name: 'claude/add-a-changelog-1a2b3', from: 'text' }]);
    assert.equal(
      describeExecutionReport(report),
      'Pull request: https://github.com/acme/widgets/pull/42. Branch: claude/add-a-changelog-1a2b3.',
    );
  });

  it('adds the session outcome branch, once, saying where it came from', () => {
    const report = findExecutionReport(['Pushed claude/x-1.'], context(['claude/x-1', 'claude/other-2']));
    assert.deepEqual(report.branches, [
      { name: 'claude/x-1', from: 'text' },
      { name: 'claude/other-2', from: 'session' },
    ]);
    // what the session said wins over the branch the launch asked for
    assert.equal(describeExecutionReport(report), 'Branch: claude/x-1.');
    const quiet = findExecutionReport(['Done.'], context(['claude/plan-x-3a778']));
    assert.equal(describeExecutionReport(quiet), "Branch (the session's outcome): claude/plan-x-3a778.");
  });

  it('reports nothing when nothing is there (no invented pull request)', () => {
    const report = findExecutionReport(['CHANGELOG.md added and linked from the README.', 'see github.com/acme/widgets/issues/3'], {
      sources: [],
    });
    assert.deepEqual(report, { pullRequests: [], branches: [] });
    assert.equal(describeExecutionReport(report), undefined);
  });

  it('ignores look-alikes: other hosts, a path ending in claude/, a word containing claude/', () => {
    const report = findExecutionReport([
      'https://gitlab.com/acme/widgets/pull/1 and http://github.com/acme/widgets/pull/2 and src/claude/ and myclaude/x and claude/',
    ]);
    assert.deepEqual(report.pullRequests, []);
    assert.deepEqual(report.branches, []);
  });

  it('keeps several pull requests in order without duplicates, from both texts', () => {
    const report = findExecutionReport([
      'https://github.com/acme/widgets/pull/7, and https://github.com/acme/widgets/pull/7#top',
      'also https://github.com/acme/api/pull/8)',
    ]);
    assert.deepEqual(report.pullRequests, ['https://github.com/acme/widgets/pull/7', 'https://github.com/acme/api/pull/8']);
  });

  it('reads outcomes defensively: unknown shapes give no branch', () => {
    assert.deepEqual(outcomeBranches(undefined), []);
    assert.deepEqual(outcomeBranches({ outcomes: 'x' }), []);
    assert.deepEqual(
      outcomeBranches({
        outcomes: [
          { type: 'other', git_info: { branches: ['a'] } },
          7,
          null,
          { type: 'git_repository', git_info: { branches: [' ', 'claude/y'] } },
        ],
      }),
      ['claude/y'],
    );
  });
});
