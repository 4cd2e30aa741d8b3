import { strict as assert } from 'node:assert';
import { parseGitDiff } from '../../../src/core/review/changes';
import { DEFAULT_REVIEW_LIMITS, isSafeRevision, isSecretPath, sizeRefusal } from '../../../src/core/review/scope';
import { anchorLines, isDismissed, reanchor } from '../../../src/core/review/anchor';
import { mapClaudeReview } from '../../../src/core/review/claudeReview';

const DIFF = [
  'diff --git a/src/x.ts b/src/x.ts',
  'index 1111111..2222222 100644',
  '--- a/src/x.ts',
  '+++ b/src/x.ts',
  '@@ -1,4 +1,5 @@',
  ' a',
  '-b',
  '+c',
  '+d',
  ' e',
  ' f',
  'diff --git a/config/.env.local b/config/.env.local',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/config/.env.local',
  '@@ -0,0 +1 @@',
  '+TOKEN=abc',
  'diff --git a/logo.png b/logo.png',
  'new file mode 100644',
  'index 0000000..b1b1b1b',
  'Binary files /dev/null and b/logo.png differ',
  '',
].join('\n');

describe('review change rules', () => {
  it('splits git diff into files with their changed new-side lines, and withholds secrets', () => {
    const change = parseGitDiff(DIFF);
    assert.deepEqual(change.withheld, ['config/.env.local']);
    assert.deepEqual(
      change.files.map((f) => [f.path, f.status, f.added, f.removed]),
      [
        ['src/x.ts', 'modified', 2, 1],
        ['logo.png', 'binary', 0, 0],
      ],
    );
    assert.deepEqual(change.files[0]!.ranges, [{ start: 2, end: 3 }]);
    assert.equal(change.size.changedLines, 3);
    assert.ok(!change.files.some((f) => f.patch.includes('TOKEN=abc')));
  });

  it('the secret rule matches by base name in any folder, any case', () => {
    for (const name of [
      '.env',
      'app/.ENV.production',
      'deploy/server.PEM',
      'home/id_ed25519',
      '.npmrc',
      'ops/credentials.json',
      'gcp-service-account-prod.json',
      'infra/terraform.tfstate',
      'prod.env',
      'config/.local.ENV',
      '.envrc',
      'home/.kube/config',
      'kubeconfig',
      'ops/prod.kubeconfig',
      'infra/prod.tfvars',
      'infra/x.auto.tfvars.json',
      '.netrc',
      '.pypirc',
      'id_rsa',
      'certs/tls.key',
      'home/.aws/credentials',
      'home/.docker/config.json',
      'credentials.json',
      'home/.ssh/known_hosts',
      'C:\\Users\\me\\.kube\\config',
    ])
      assert.ok(isSecretPath(name), name);
    for (const name of [
      'src/env.ts',
      'docs/keys.md',
      'environment.md',
      'src/secretsView.ts',
      'package.json',
      'src/config',
      'docker/config.json',
      'kube/config',
      'src/environment.ts',
      'docs/kubeconfig-guide.md',
    ])
      assert.ok(!isSecretPath(name), name);
  });

  it('every side of the diff is judged: the old name of a blob-to-blob diff, a deletion, and a secret renamed or copied under a harmless name', () => {
    const diff = [
      // What `git diff HEAD:.env HEAD:x` writes: the secret only as the old side.
      'diff --git a/.env b/x',
      'index 65ec267..45b983b 100644',
      '--- a/.env',
      '+++ b/x',
      '@@ -1 +1 @@',
      '-SECRET=1',
      '+hi',
      // A rename with renames off: the secret deleted, its text added under another name.
      'diff --git a/prod.tfvars b/prod.tfvars',
      'deleted file mode 100644',
      'index 7777777..0000000',
      '--- a/prod.tfvars',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-db_password = "hunter2"',
      'diff --git a/notes/vars.txt b/notes/vars.txt',
      'new file mode 100644',
      'index 0000000..7777777',
      '--- /dev/null',
      '+++ b/notes/vars.txt',
      '@@ -0,0 +1 @@',
      '+db_password = "hunter2"',
      // And the other way: a harmless file renamed to a secret's name.
      'diff --git a/notes/a.txt b/notes/a.txt',
      'deleted file mode 100644',
      'index 8888888..0000000',
      '--- a/notes/a.txt',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-moved',
      'diff --git a/.envrc b/.envrc',
      'new file mode 100644',
      'index 0000000..8888888',
      '--- /dev/null',
      '+++ b/.envrc',
      '@@ -0,0 +1 @@',
      '+moved',
      'diff --git a/src/ok.ts b/src/ok.ts',
      'index 1111111..2222222 100644',
      '--- a/src/ok.ts',
      '+++ b/src/ok.ts',
      '@@ -1 +1 @@',
      '-a',
      '+b',
      '',
    ].join('\n');
    const change = parseGitDiff(diff);
    assert.deepEqual(change.withheld, ['x', 'prod.tfvars', 'notes/vars.txt', 'notes/a.txt', '.envrc']);
    assert.deepEqual(
      change.files.map((f) => f.path),
      ['src/ok.ts'],
    );
    assert.ok(!change.files.some((f) => /SECRET|hunter2/.test(f.patch)));
  });

  it('a change too large is refused with its numbers', () => {
    assert.equal(sizeRefusal({ files: 3, changedLines: 10, diffBytes: 100 }, DEFAULT_REVIEW_LIMITS), null);
    const refusal = sizeRefusal({ files: 400, changedLines: 25_000, diffBytes: 100 }, DEFAULT_REVIEW_LIMITS);
    assert.match(refusal ?? '', /400 files \(limit 300\), 25000 changed lines \(limit 20000\)\. Nothing was sent/);
  });

  it('revisions that look like options or ranges are not passed to git', () => {
    assert.ok(isSafeRevision('origin/main') && isSafeRevision('HEAD~3') && isSafeRevision('v1.2.0'));
    assert.ok(!isSafeRevision('--output=/tmp/x') && !isSafeRevision('a b') && !isSafeRevision('a..b'));
    // rev:path names a blob; :/text searches messages. Neither is a side of a commit range.
    assert.ok(!isSafeRevision('HEAD:.env') && !isSafeRevision(':/fix') && !isSafeRevision('main:src'));
  });

  it('a thread follows its code and is outdated when the code is gone', () => {
    const before = ['one', 'two', 'bad()', 'four'];
    const anchor = anchorLines(before, 3, 3);
    assert.deepEqual(reanchor(anchor, 3, ['zero', ...before]), { kind: 'at', startLine: 4, endLine: 4 });
    assert.deepEqual(reanchor(anchor, 3, ['one', 'two', 'good()', 'four']), { kind: 'outdated' });
    // Two copies: the nearer one.
    assert.deepEqual(reanchor(anchor, 6, ['bad()', 'x', 'x', 'x', 'x', 'bad()']), { kind: 'at', startLine: 6, endLine: 6 });
  });

  it('a dismissal holds for the same code and problem, not for changed code', () => {
    const dismissal = { file: 'a.ts', title: 'Off-by-one in loop', code: ['for (;;)'], reason: 'intended', at: '2026-01-01T00:00:00Z' };
    assert.ok(isDismissed({ file: 'a.ts', title: 'Loop off-by-one' }, ['for (;;)'], [dismissal]));
    assert.equal(isDismissed({ file: 'a.ts', title: 'Off-by-one in loop' }, ['for (i = 0;;)'], [dismissal]), undefined);
    assert.equal(isDismissed({ file: 'a.ts', title: 'SQL injection' }, ['for (;;)'], [dismissal]), undefined);
  });

  describe("Claude Code's review output", () => {
    it('maps findings, headline and body from pr_comment, severities', () => {
      const stdout = JSON.stringify([
        {
          file_path: 'src/a.ts',
          start_line: 4,
          end_line: 6,
          severity: 'normal',
          pr_comment: 'Null dereference\n\nuser may be undefined here.',
          reasoning: 'getUser returns undefined on miss',
        },
        { file_path: 'src/b.ts', start_line: 1, severity: 'pre_existing', pr_comment: 'Old leak' },
        { file_path: 'src/c.ts', start_line: 2, end_line: 2, severity: 'nit', pr_comment: 'Typo' },
      ]);
      const mapped = mapClaudeReview(stdout + '\n', '', 0);
      assert.ok(mapped.ok);
      assert.deepEqual(
        mapped.findings.map((f) => [f.file, f.startLine, f.endLine, f.severity, f.title]),
        [
          ['src/a.ts', 4, 6, 'major', 'Null dereference'],
          ['src/b.ts', 1, 1, 'minor', 'Old leak'],
          ['src/c.ts', 2, 2, 'nit', 'Typo'],
        ],
      );
      assert.equal(mapped.findings[0]!.explanation, 'user may be undefined here.\n\ngetUser returns undefined on miss');
    });

    it('an empty list is a completed review; an {error} object and a bare exit 1 are failures with their reason', () => {
      const empty = mapClaudeReview('[]\n', '', 0);
      assert.ok(empty.ok && empty.findings.length === 0);
      const error = mapClaudeReview('{"error":"cloud session was archived before producing output"}\n', '', 1);
      assert.deepEqual(error, { ok: false, error: 'cloud session was archived before producing output' });
      const stopped = mapClaudeReview('{"error":"stopped by you","reason":"stopped"}\n', '', 1);
      assert.ok(!stopped.ok && /was stopped/.test(stopped.error));
      const notLoggedIn = mapClaudeReview('', 'Ultrareview could not launch: Not logged in.', 1);
      assert.deepEqual(notLoggedIn, { ok: false, error: 'claude ultrareview exited with 1: Ultrareview could not launch: Not logged in.' });
    });
  });
});
