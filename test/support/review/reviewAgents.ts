// Real ACP agents as review sources: each agent kind (Claude's adapter, Gemini CLI, Codex's
// adapter) gets its own scripted model on 127.0.0.1, a throwaway home, and an embedded SessionHost
// running the real agent program in the review's repository. The model answers finder and verifier prompts by what they ask (the fleet runs them
// in parallel, so rounds are routed by content rather than by order).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AcpAgent } from '../../../src/agents/acp/acpAgent';
import { InProcessBackend } from '../../../src/service/inProcessBackend';
import { SessionHost } from '../../../src/service/host/sessionHost';
import { runAgentTurn } from '../../../src/client/review/agentTurn';
import type { ReviewerSource } from '../../../src/client/review/fleet';
import { anthropicApi } from '../modelApi/anthropic';
import { geminiApi } from '../modelApi/gemini';
import {
  startScriptedResponses,
  toolNames,
  userTexts,
  type ModelReply as ResponsesReply,
  type ScriptedResponsesApi,
  type LoggedRequest as ResponsesRequest,
} from '../modelApi/openaiResponses';
import { Scenario, ScriptedModelServer, type ModelReply, type ModelRequestView } from '../modelApi/scenario';
import { assertAgentGroupsGone, killGroupsLeft } from '../processes';
import { CLAUDE_ADAPTER, claudeEnv, codexArgv, codexEnv, geminiArgv, geminiEnv } from '../realAgents';

export type ReviewAgentKind = 'claude' | 'gemini' | 'codex';

const LABELS: Record<ReviewAgentKind, string> = { claude: 'Claude (ACP)', gemini: 'Gemini CLI (ACP)', codex: 'Codex (ACP)' };
const ROUNDS = 200;

/** What the scripted model says to a finder prompt, and to a verifier prompt (by the finding's title). */
export interface ReviewModelScript {
  finder: (view: ModelRequestView) => ModelReply;
  verifier: (title: string, view: ModelRequestView) => ModelReply;
}

export const FINDER_MARK = 'Review this code change';
export const VERIFIER_MARK = 'Another reviewer reported this problem';

export function json(value: unknown): ModelReply {
  return { text: `Here is my review.\n\n\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\`\n` };
}

function route(script: ReviewModelScript): (view: ModelRequestView) => ModelReply {
  return (view) => {
    const text = view.lastUser.text;
    if (text.includes(VERIFIER_MARK)) return script.verifier(/^Title: (.*)$/m.exec(text)?.[1] ?? '', view);
    if (text.includes(FINDER_MARK)) return script.finder(view);
    return { text: 'Nothing to add.' };
  };
}

/** A Responses API request as the review script reads it (the same view the other APIs give). */
function responsesView(request: ResponsesRequest, round: number): ModelRequestView {
  const body = (request.body ?? {}) as { model?: unknown };
  return {
    round,
    model: String(body.model ?? ''),
    allText: JSON.stringify(request.body ?? ''),
    lastUser: { text: userTexts(request).at(-1) ?? '', toolResults: [] },
    toolNames: toolNames(request),
  };
}

function responsesReply(reply: ModelReply): ResponsesReply {
  if ('error' in reply) return { httpError: reply.error.status, message: reply.error.message };
  if ('hang' in reply) throw new Error('the Responses API stand-in cannot hang a reply');
  if (reply.toolCalls?.length) throw new Error('the review script makes no tool calls for Codex');
  return { text: reply.text ?? '' };
}

export class ReviewAgentSource {
  readonly agents: AcpAgent[] = [];
  /** Claude's and Gemini's scripted model. */
  model?: ScriptedModelServer;
  /** Codex's scripted model. */
  responses?: ScriptedResponsesApi;
  host!: SessionHost;
  backend!: InProcessBackend;
  home = '';
  label = '';

  async open(kind: ReviewAgentKind, workspace: string, script: ReviewModelScript): Promise<ReviewerSource> {
    this.home = await mkdtemp(path.join(tmpdir(), `ultraplan-review-${kind}-home-`));
    const answer = route(script);
    let url: string;
    if (kind === 'codex') {
      this.responses = await startScriptedResponses(
        Array.from({ length: ROUNDS }, (_, round) => (request: ResponsesRequest) => responsesReply(answer(responsesView(request, round)))),
      );
      url = this.responses.baseUrl;
    } else {
      this.model = new ScriptedModelServer(
        kind === 'claude' ? anthropicApi : geminiApi,
        new Scenario(Array.from({ length: ROUNDS }, () => answer)),
      );
      url = await this.model.start();
    }
    if (kind === 'gemini') {
      await mkdir(path.join(this.home, '.gemini'), { recursive: true });
      await writeFile(path.join(this.home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [workspace]: 'TRUST_FOLDER' }));
    }
    this.label = LABELS[kind];
    const options = {
      argv: kind === 'claude' ? [CLAUDE_ADAPTER] : kind === 'gemini' ? geminiArgv() : codexArgv(),
      cwd: workspace,
      env: kind === 'claude' ? claudeEnv(this.home, url) : kind === 'gemini' ? geminiEnv(this.home, url) : codexEnv(this.home, url),
      inheritEnv: false,
      label: this.label,
      stopGraceMs: 2000,
    };
    this.host = new SessionHost({
      agentFactory: () => {
        const agent = new AcpAgent(options);
        this.agents.push(agent);
        return agent;
      },
    });
    this.backend = new InProcessBackend({ host: this.host, label: `Embedded · ${this.label}` });
    if (kind === 'codex') await this.#firstCodexRun();
    return { label: this.label, backend: this.backend };
  }

  /**
   * One turn before the review, as a person's Codex home has been used before: Codex 2.6.0 creates
   * its state database on its first start, and two adapters doing that at once in a fresh home
   * fail ("failed to initialize sqlite state runtime").
   */
  async #firstCodexRun(): Promise<void> {
    const turn = await runAgentTurn({ backend: this.backend, title: 'first run', prompt: 'Hello.', signal: new AbortController().signal });
    if (!turn.ok) throw new Error(`Codex's first run failed: ${turn.error}`);
  }

  /** The newest user text of each model round this agent's model answered. */
  promptsSeen(): string[] {
    if (this.responses) return this.responses.modelRequests().map((request) => userTexts(request).at(-1) ?? '');
    return (this.model?.rounds ?? []).map((round) => round.view?.lastUser.text ?? '');
  }

  /** Every request body the model was sent, as text (to show what never reached it). */
  sentText(): string {
    const requests = this.responses?.requests ?? this.model?.requests ?? [];
    return requests.map((request) => JSON.stringify(request.body ?? '')).join('\n');
  }

  /** Closes the host and checks that no agent process is left. */
  async close(): Promise<void> {
    const pids = this.agents.map((agent) => agent.pid).filter((pid): pid is number => pid !== undefined);
    try {
      await this.backend?.dispose();
      await assertAgentGroupsGone(pids);
    } finally {
      killGroupsLeft(pids);
      await this.model?.close();
      await this.responses?.close();
      if (this.home) await rm(this.home, { recursive: true, force: true });
    }
  }
}
