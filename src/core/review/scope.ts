// What a review looks at (docs/review.md "Scope") and the rules applied to it before anything is
// sent to a reviewer: files that look like secrets are left out, and a change too large is
// refused with its numbers rather than cut.
import * as z from 'zod';

export const ReviewScopeSchema = z.discriminatedUnion('kind', [
  /** The branch against its merge-base with the default branch, plus the uncommitted work. */
  z.strictObject({ kind: z.literal('branch'), base: z.string().min(1).optional(), includeUntracked: z.boolean().default(false) }),
  z.strictObject({ kind: z.literal('staged') }),
  /** `from..to` (to defaults to HEAD). */
  z.strictObject({ kind: z.literal('range'), from: z.string().min(1), to: z.string().min(1).default('HEAD') }),
  z.strictObject({ kind: z.literal('pr'), number: z.number().int().min(1) }),
  /** Everything since a revision: its commits since then plus the uncommitted work (`git diff REV`). */
  z.strictObject({ kind: z.literal('since'), rev: z.string().min(1), includeUntracked: z.boolean().default(false) }),
]);
export type ReviewScope = z.infer<typeof ReviewScopeSchema>;

export function describeScope(scope: ReviewScope): string {
  switch (scope.kind) {
    case 'branch':
      return `this branch against ${scope.base ?? 'the default branch'}, with uncommitted work${scope.includeUntracked ? ' and untracked files' : ''}`;
    case 'staged':
      return 'the staged changes';
    case 'range':
      return `commits ${scope.from}..${scope.to}`;
    case 'pr':
      return `pull request #${scope.number}`;
    case 'since':
      return `the changes since ${scope.rev}, with uncommitted work${scope.includeUntracked ? ' and untracked files' : ''}`;
  }
}

/**
 * Git revision text we pass on: no option look-alikes, no whitespace or control characters, and
 * no `rev:path` (a blob, which would diff one file's text against another's, whatever its name).
 */
export function isSafeRevision(revision: string): boolean {
  return /^[A-Za-z0-9_./@^~{}+-]{1,200}$/.test(revision) && !revision.startsWith('-') && !revision.includes('..');
}

/**
 * The secret rule: a file is never sent, and never read by a reviewer, when its name (any folder)
 * is one of these. Matching is on the base name, case-insensitive, so `config/.ENV.local` and
 * `deploy/key.PEM` are both kept back. One list: the review's diff and the reviewers' read policy
 * both ask isSecretPath.
 */
const SECRET_NAMES: readonly RegExp[] = [
  /^\.env(\..*)?$/, // .env, .env.local, .env.production
  /^.+\.env$/, // prod.env, .local.env
  /^\.envrc$/, // direnv
  /^.*\.(pem|key|p12|pfx|jks|keystore|kdbx|ppk|asc|gpg|p8)$/,
  /^id_(rsa|dsa|ecdsa|ed25519)(_sk)?(\.pub)?$/,
  /^\.(npmrc|pypirc|netrc|pgpass|git-credentials|htpasswd|vault-token)$/,
  /^(credentials|secrets?)(\..*)?$/, // credentials.json, .aws/credentials, secrets.yaml
  /^.*(service[-_]?account|client[-_]secret).*\.json$/,
  /^.*\.tfstate(\.backup)?$/,
  /^.*\.tfvars(\.json)?$/,
  /^(.*[._-])?kubeconfig(\..*)?$/, // kubeconfig, prod.kubeconfig, kubeconfig.yaml
];

/** Files known by their folder: `.kube/config`, `.docker/config.json`; anything under `.ssh/` or `.gnupg/`. */
const SECRET_PLACES: readonly RegExp[] = [/(^|\/)\.kube\/config$/, /(^|\/)\.docker\/config\.json$/, /(^|\/)\.(ssh|gnupg)\//];

export function isSecretPath(filePath: string): boolean {
  const normalized = filePath.replace(/\\/g, '/').toLowerCase();
  const base = normalized.split('/').pop() ?? '';
  return SECRET_NAMES.some((rule) => rule.test(base)) || SECRET_PLACES.some((rule) => rule.test(normalized));
}

/**
 * What a reviewer's agent never reads: the secret rule's files, and the repository's git folder
 * (its objects hold every committed secret's text, and its config names programs).
 */
export function isWithheldFromReviewers(filePath: string): boolean {
  return isSecretPath(filePath) || /(^|\/)\.git(\/|$)/i.test(filePath.replace(/\\/g, '/'));
}

export interface ReviewLimits {
  maxFiles: number;
  /** Added plus removed lines. */
  maxChangedLines: number;
  /** The diff's size in bytes, as sent. */
  maxDiffBytes: number;
}

export const DEFAULT_REVIEW_LIMITS: ReviewLimits = { maxFiles: 300, maxChangedLines: 20_000, maxDiffBytes: 2_000_000 };

export interface ChangeSize {
  files: number;
  changedLines: number;
  diffBytes: number;
}

/** Null when the change fits; otherwise what a person reads, with the numbers. */
export function sizeRefusal(size: ChangeSize, limits: ReviewLimits): string | null {
  const over: string[] = [];
  if (size.files > limits.maxFiles) over.push(`${size.files} files (limit ${limits.maxFiles})`);
  if (size.changedLines > limits.maxChangedLines) over.push(`${size.changedLines} changed lines (limit ${limits.maxChangedLines})`);
  if (size.diffBytes > limits.maxDiffBytes) over.push(`${size.diffBytes} bytes of diff (limit ${limits.maxDiffBytes})`);
  if (!over.length) return null;
  return `This change is too large to review whole: ${over.join(', ')}. Nothing was sent. Review a narrower scope (staged changes or a commit range).`;
}
