#!/usr/bin/env node
// ultraplan-review: a verified review of the current change from the command line, for CI (built
// to dist/review.mjs). Exit codes: 0 nothing at or above --fail-on, 1 such findings, 2 the review
// failed (or was used wrongly). --json prints one JSON document on stdout; progress goes to stderr.
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { SEVERITIES, type Severity } from '../core/review/finding';
import { verificationLabel } from '../core/review/merge';
import { exitCodeFor, outcomeDetails, outcomeHeadline, type ReviewOutcome } from '../core/review/outcome';
import { progressLine } from '../core/review/progress';
import { ReviewScopeSchema, type ReviewScope } from '../core/review/scope';
import { createAgentFactory } from '../agents/agentSpec';
import type { SessionBackend } from '../core/sessionBackend';
import { SessionsClient } from '../client/sessionsClient';
import { InProcessBackend } from '../service/inProcessBackend';
import { SessionHost } from '../service/host/sessionHost';
import { HttpBackend } from '../client/httpBackend';
import { CLAUDE_BILLING_NOTICE } from '../client/review/claudeReviewRun';
import type { ReviewerSource } from '../client/review/fleet';
import { runReview, type ReviewRequest } from '../client/review/review';
import { errorMessage } from '../core/errors';
import { runVerifyCli, VERIFY_HELP } from './verifyCli';

const FAILED_EXIT = 2;

export const HELP = `Usage: ultraplan-review [scope] --agent KIND:ARG… | --server URL | --claude [options]
       ultraplan-review --against-plan PLAN.md [--since REV] --agent KIND:ARG… | --server URL [options]

Reviews a change with a fleet of agents that verify each other's findings.

Scope (default: this branch against its merge-base with the default branch, plus uncommitted work):
  --base BRANCH       compare with BRANCH instead of the default branch
  --untracked         include untracked files (default: left out)
  --staged            only the staged changes
  --range FROM..TO    a commit range
  --pr NUMBER         a GitHub pull request (needs the gh command, logged in)

Reviewers:
  --agent KIND:ARG    an ACP agent run here (acp:claude, acp:gemini, acp:codex, acp:"COMMAND…");
                      repeatable: finders are spread over the agents, and each finding is
                      verified by another agent than the one that found it
  --verifier KIND:ARG an ACP agent that verifies the findings (repeatable; default: the --agent
                      agents), e.g. finders --agent acp:codex, verifier --verifier acp:claude
  --server URL        a session server's agent (token from ULTRAPLAN_SERVER_TOKEN)
  --finders N         finder runs (default 3)
  --claude            also run Claude Code's own review (claude ultrareview --json); ${CLAUDE_BILLING_NOTICE}
  --claude-command C  the claude command (default: claude)
  --trust-workspace   pass --trust-workspace to Claude Code (this folder is trusted for the run)

Output:
  --json              one JSON document on stdout
  --fail-on SEVERITY  exit 1 when a finding is at least this severe (${SEVERITIES.join(', ')}; default major)
  --cwd DIR           the repository (default: the current directory)
  -h, --help

Exit codes: 0 no findings at or above --fail-on; 1 such findings; 2 the review failed.

${VERIFY_HELP}`;

class UsageError extends Error {}

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  signal: AbortSignal;
}

function scopeFrom(values: Record<string, unknown>): ReviewScope {
  const chosen = ['staged', 'range', 'pr'].filter((key) => values[key] !== undefined && values[key] !== false);
  if (chosen.length > 1) throw new UsageError(`choose one scope: --${chosen.join(', --')}`);
  if (values.staged) return { kind: 'staged' };
  if (typeof values.range === 'string') {
    const [from, to, extra] = values.range.split('..');
    if (!from || extra !== undefined) throw new UsageError(`--range takes FROM..TO, got "${values.range}"`);
    return ReviewScopeSchema.parse({ kind: 'range', from, ...(to ? { to } : {}) });
  }
  if (typeof values.pr === 'string') {
    if (!/^\d+$/.test(values.pr)) throw new UsageError(`--pr takes a pull request number, got "${values.pr}"`);
    return { kind: 'pr', number: Number(values.pr) };
  }
  return ReviewScopeSchema.parse({
    kind: 'branch',
    ...(typeof values.base === 'string' ? { base: values.base } : {}),
    includeUntracked: values.untracked === true,
  });
}

function jsonReport(outcome: ReviewOutcome, scopeText: string | undefined, withheld: readonly string[], exitCode: number): unknown {
  return {
    outcome: outcome.kind,
    headline: outcomeHeadline(outcome),
    details: outcomeDetails(outcome),
    scope: scopeText ?? null,
    withheld,
    counts: outcome.kind === 'findings' || outcome.kind === 'clean' ? outcome.counts : null,
    findings: outcome.kind === 'findings' ? outcome.findings : [],
    reviewers: outcome.reviewers,
    exitCode,
  };
}

function textReport(outcome: ReviewOutcome): string {
  const lines = [outcomeHeadline(outcome), ...outcomeDetails(outcome)];
  if (outcome.kind === 'findings') {
    for (const finding of outcome.findings) {
      lines.push('', `[${finding.severity}] ${finding.file}:${finding.startLine}-${finding.endLine}  ${finding.title}`);
      lines.push(...finding.explanation.split('\n').map((line) => `    ${line}`));
      lines.push(`    ${verificationLabel(finding)} · found by ${finding.foundBy.join(', ')}`);
    }
  }
  return lines.join('\n') + '\n';
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const hosts: SessionBackend[] = [];
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        base: { type: 'string' },
        untracked: { type: 'boolean' },
        staged: { type: 'boolean' },
        range: { type: 'string' },
        pr: { type: 'string' },
        agent: { type: 'string', multiple: true },
        verifier: { type: 'string', multiple: true },
        server: { type: 'string' },
        finders: { type: 'string' },
        claude: { type: 'boolean' },
        'claude-command': { type: 'string' },
        'trust-workspace': { type: 'boolean' },
        json: { type: 'boolean' },
        'fail-on': { type: 'string' },
        cwd: { type: 'string' },
        'against-plan': { type: 'string' },
        since: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      io.stdout(HELP);
      return 0;
    }
    const againstPlan = values['against-plan'];
    if (againstPlan !== undefined) {
      const other = ['base', 'staged', 'range', 'pr', 'claude'].filter((key) => values[key as keyof typeof values] !== undefined);
      if (other.length) throw new UsageError(`--against-plan verifies the change since --since; it does not take --${other.join(', --')}`);
      if (values['fail-on'] !== undefined && values['fail-on'] !== 'out-of-plan')
        throw new UsageError(`with --against-plan, --fail-on takes out-of-plan, got "${values['fail-on']}"`);
    } else if (values.since !== undefined) throw new UsageError('--since goes with --against-plan; a review takes --base or --range');
    const failOn = (againstPlan === undefined ? (values['fail-on'] ?? 'major') : 'major') as Severity;
    if (!(SEVERITIES as readonly string[]).includes(failOn))
      throw new UsageError(`--fail-on takes one of ${SEVERITIES.join(', ')}, got "${failOn}"`);
    const finders = values.finders === undefined ? 3 : Number(values.finders);
    if (!Number.isInteger(finders) || finders < 1 || finders > 20)
      throw new UsageError(`--finders takes a number from 1 to 20, got "${values.finders}"`);
    const scope = scopeFrom(values);
    const folder = path.resolve(io.cwd, values.cwd ?? '.');
    const log = (line: string) => io.stderr(`${line}\n`);

    const sources: ReviewerSource[] = [];
    const embedded = async (spec: string): Promise<ReviewerSource> => {
      const { factory, label } = await createAgentFactory(spec, { log: () => undefined, workspace: folder });
      const backend = new InProcessBackend({ host: new SessionHost({ agentFactory: factory }), label });
      hosts.push(backend);
      return { label, backend };
    };
    for (const spec of values.agent ?? []) sources.push(await embedded(spec));
    const verifiers: ReviewerSource[] = [];
    for (const spec of values.verifier ?? []) verifiers.push(await embedded(spec));
    if (values.server) {
      const token = io.env.ULTRAPLAN_SERVER_TOKEN ?? null;
      const backend = new HttpBackend({
        client: new SessionsClient({ baseUrl: values.server, getToken: async () => token }),
        preferStream: true,
      });
      hosts.push(backend);
      sources.push({ label: backend.label, backend });
    }
    if (!sources.length && againstPlan !== undefined) throw new UsageError('name the agents that verify: --agent KIND:ARG or --server URL');
    if (!sources.length && !values.claude) throw new UsageError('name the reviewers: --agent KIND:ARG, --server URL or --claude');
    if (verifiers.length && !sources.length)
      throw new UsageError('--verifier checks what finders found: name them with --agent or --server');
    if (againstPlan !== undefined) {
      return await runVerifyCli({
        planFile: path.resolve(io.cwd, againstPlan),
        folder,
        ...(values.since !== undefined ? { since: values.since } : {}),
        includeUntracked: values.untracked === true,
        failOnOutOfPlan: values['fail-on'] === 'out-of-plan',
        json: values.json === true,
        sources,
        verifiers,
        finders,
        signal: io.signal,
        stdout: io.stdout,
        log,
      });
    }
    if (values.claude) log(CLAUDE_BILLING_NOTICE);

    let lastLine = '';
    const request: ReviewRequest = {
      folder,
      scope,
      signal: io.signal,
      ...(sources.length ? { fleet: { sources, finders, ...(verifiers.length ? { verifiers } : {}) } } : {}),
      ...(values.claude
        ? {
            claude: {
              command: [values['claude-command'] ?? 'claude'],
              trusted: values['trust-workspace'] === true,
              env: io.env,
              onLine: (line: string) => log(`claude: ${line}`),
            },
          }
        : {}),
      onProgress: (progress) => {
        const line = progressLine(progress);
        if (line !== lastLine) log((lastLine = line));
      },
    };
    const { outcome, change } = await runReview(request);
    const exitCode = exitCodeFor(outcome, failOn);
    if (change?.withheld.length) log(`Left out as secrets (never sent): ${change.withheld.join(', ')}`);
    io.stdout(
      values.json
        ? `${JSON.stringify(jsonReport(outcome, change?.scopeText, change?.withheld ?? [], exitCode), null, 2)}\n`
        : textReport(outcome),
    );
    return exitCode;
  } catch (error) {
    const message = errorMessage(error);
    io.stderr(
      `ultraplan-review: ${message}\n${error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? 'Run ultraplan-review --help for usage.\n' : ''}`,
    );
    return FAILED_EXIT;
  } finally {
    for (const backend of hosts) await backend.dispose().catch(() => undefined);
  }
}

// The program's entry (dist/review.mjs, an ES module of the Node graph): it runs when loaded, as
// dist/server.mjs does.
const abort = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => abort.abort());
void runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  signal: abort.signal,
}).then((code) => {
  process.exitCode = code;
});
