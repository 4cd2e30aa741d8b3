// Real ACP agents as review sources: each agent kind gets its own scripted model on 127.0.0.1,
// a throwaway home, and an embedded SessionHost running the real agent program in the review's
// repository. The model answers finder and verifier prompts by what they ask (the fleet runs them
// in parallel, so rounds are routed by content rather than by order).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AcpAgent } from '../../../src/sessions/acp/acpAgent';
import { EmbeddedBackend } from '../../../src/sessions/embeddedBackend';
import { SessionHost } from '../../../src/sessions/host';
import type { ReviewerSource } from '../../../src/sessions/review/fleet';
import { anthropicApi } from '../modelApi/anthropic';
import { geminiApi } from '../modelApi/gemini';
import { Scenario, ScriptedModelServer, type ModelReply, type ModelRequestView } from '../modelApi/scenario';
import { assertAgentGroupsGone, killGroupsLeft } from '../processes';
import { CLAUDE_ADAPTER, claudeEnv, geminiArgv, geminiEnv } from '../realAgents';

export type ReviewAgentKind = 'claude' | 'gemini';

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

export class ReviewAgentSource {
  readonly agents: AcpAgent[] = [];
  model!: ScriptedModelServer;
  host!: SessionHost;
  backend!: EmbeddedBackend;
  home = '';
  label = '';

  async open(kind: ReviewAgentKind, workspace: string, script: ReviewModelScript): Promise<ReviewerSource> {
    this.home = await mkdtemp(path.join(tmpdir(), `ultraplan-review-${kind}-home-`));
    this.model = new ScriptedModelServer(
      kind === 'claude' ? anthropicApi : geminiApi,
      new Scenario(Array.from({ length: 200 }, () => route(script))),
    );
    const url = await this.model.start();
    if (kind === 'gemini') {
      await mkdir(path.join(this.home, '.gemini'), { recursive: true });
      await writeFile(path.join(this.home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [workspace]: 'TRUST_FOLDER' }));
    }
    this.label = kind === 'claude' ? 'Claude (ACP)' : 'Gemini CLI (ACP)';
    const options = {
      argv: kind === 'claude' ? [CLAUDE_ADAPTER] : geminiArgv(),
      cwd: workspace,
      env: kind === 'claude' ? claudeEnv(this.home, url) : geminiEnv(this.home, url),
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
    this.backend = new EmbeddedBackend({ host: this.host, label: `Embedded · ${this.label}` });
    return { label: this.label, backend: this.backend };
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
      if (this.home) await rm(this.home, { recursive: true, force: true });
    }
  }
}
