// The session-creation request Claude Code sends for an ultraplan (docs/protocol.md sections 1 and 9):
// plan mode with the ultraplan flag, then the prompt; the repository as the source; a fresh
// claude/<slug> branch as the outcome. Pure.
import { randomBytes, randomUUID } from 'node:crypto';
import { toLinkSessionId } from '../../core/codeSessions';
import { CreateSessionRequestSchema, setPlanModeEvent, userMessageEvent, type CreateSessionRequest } from '../../core/protocol';

export const TITLE_PREFIX = 'ultraplan: ';
const TITLE_TEXT_MAX = 80;
const SLUG_MAX = 40;

export interface LaunchRepository {
  /** https://host/owner/name */
  httpsUrl: string;
  owner: string;
  name: string;
  /** Branch (or commit) the remote starts from; undefined: the repository's default branch. */
  revision: string | undefined;
}

/** `ultraplan: <first line of the text>`, shortened; a title already prefixed is kept as is. */
export function ultraplanTitle(text: string): string {
  const trimmed = text.trim();
  if (trimmed.toLowerCase().startsWith(TITLE_PREFIX)) return TITLE_PREFIX + shorten(trimmed.slice(TITLE_PREFIX.length).trim());
  return TITLE_PREFIX + (shorten(trimmed) || 'plan');
}

function shorten(text: string): string {
  const line = (text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '').trim().replace(/\s+/g, ' ');
  return line.length <= TITLE_TEXT_MAX ? line : `${line.slice(0, TITLE_TEXT_MAX - 1).trimEnd()}…`;
}

/** claude/<words-of-the-title>-<5 random hex>, so two launches with one title never share a branch. */
export function outcomeBranch(title: string, suffix: string = randomBytes(3).toString('hex').slice(0, 5)): string {
  const words = title
    .replace(/^ultraplan:\s*/i, '')
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const cut = words.slice(0, SLUG_MAX).replace(/-+$/g, '');
  return `claude/${cut ? `${cut}-` : ''}${suffix}`;
}

export function sessionContextFor(
  repository: LaunchRepository,
  branch: string,
  model?: string,
): NonNullable<CreateSessionRequest['session_context']> {
  return {
    sources: [
      {
        type: 'git_repository',
        url: repository.httpsUrl,
        ...(repository.revision === undefined ? {} : { revision: repository.revision }),
      },
    ],
    outcomes: [
      {
        type: 'git_repository',
        git_info: { type: 'github', repo: `${repository.owner}/${repository.name}`, branches: [branch] },
      },
    ],
    ...(model === undefined ? {} : { model }),
  };
}

export interface LaunchInput {
  prompt: string;
  /** Defaults to the prompt's first line. Always sent with the `ultraplan: ` prefix. */
  title?: string;
  repository: LaunchRepository;
  environmentId: string;
  model?: string;
  /** Tests fix these; otherwise random. */
  branch?: string;
  requestId?: string;
}

/** Claude Code's create prompt names no session yet: `session_id: ""` (docs: PROTOCOL.md, "Create events"). */
const CREATE_PROMPT_FIELDS = { session_id: '' };

export function buildLaunchRequest(input: LaunchInput): CreateSessionRequest {
  const title = ultraplanTitle(input.title ?? input.prompt);
  const request: CreateSessionRequest = {
    title,
    events: [
      { type: 'event', data: setPlanModeEvent(input.requestId ?? `set-mode-${randomUUID()}`) },
      { type: 'event', data: userMessageEvent(input.prompt, CREATE_PROMPT_FIELDS) },
    ],
    session_context: sessionContextFor(input.repository, input.branch ?? outcomeBranch(title), input.model),
    environment_id: input.environmentId,
  };
  return CreateSessionRequestSchema.parse(request);
}

/**
 * A request built without knowing the backend (title and events only) made into one Claude Code
 * on the web accepts: prefixed title, the repository source and outcome, the environment, the
 * model (always sent). What the caller already set (a model, its own sources) is kept.
 */
export function completeLaunchRequest(
  request: CreateSessionRequest,
  context: { repository: LaunchRepository; environmentId: string; branch?: string; model: string },
): CreateSessionRequest {
  const title = ultraplanTitle(request.title);
  const own = request.session_context ?? {};
  const built = sessionContextFor(context.repository, context.branch ?? outcomeBranch(title), own.model ?? context.model);
  return CreateSessionRequestSchema.parse({
    ...request,
    title,
    events: request.events.map((e) =>
      e.data.type === 'user' && !('session_id' in e.data) ? { ...e, data: { ...e.data, ...CREATE_PROMPT_FIELDS } } : e,
    ),
    session_context: {
      ...own,
      sources: own.sources && own.sources.length > 0 ? own.sources : built.sources,
      outcomes: own.outcomes && own.outcomes.length > 0 ? own.outcomes : built.outcomes,
      model: built.model,
    },
    environment_id: request.environment_id ?? context.environmentId,
  });
}

/** Links name the session `session_X`, whichever id form the wire gave. */
export function claudeSessionLink(sessionId: string): string {
  return `https://claude.ai/code/${encodeURIComponent(toLinkSessionId(sessionId))}`;
}
