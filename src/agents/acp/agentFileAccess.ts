// An ACP agent's file requests, answered under the read-only policy: fs/read_text_file (automatic
// inside the workspace, the person decides outside it, never the kernel's files or our secrets),
// fs/write_text_file (while planning only the plan files this session creates), and the plan file
// an exit request names (read only when the agent created it here or it is in its own plans folder).
import { mkdir } from 'node:fs/promises';
import * as path from 'node:path';
import {
  AgentFileError,
  existingFile,
  fileIdentities,
  readAgentFile,
  writeAgentFile,
  MAX_AGENT_READ_BYTES,
  type FileIdentity,
} from './agentFiles';
import { isInside, realPathOf, realWriteTarget } from '../../core/node/realPaths';
import { readVerdict, writeVerdict, type AgentDirs, type ReadVerdict, type WriteVerdict } from './readOnlyPolicy';
import { errorMessage } from '../../core/errors';
import type { AcpAgentOptions } from './acpAgentOptions';

export interface AgentFileAccessOptions {
  /** The workspace folder (absolute). */
  workspace: string;
  /** Where the agent keeps its own plans folder (its home folder, or its folders when its environment moves them). */
  home: string | AgentDirs;
  /** Files never read for an agent, e.g. the server's token file. */
  secretFiles?: readonly string[];
  /** Files this session withholds from its agent (a review's secret rule), by path and real path. */
  withheld?: ((filePath: string) => boolean) | undefined;
  maxReadBytes?: number;
}

export type FileOutcome<T> =
  | { ok: true; value: T }
  /** refused: the policy's (or a type or size bound's) answer; missing: nothing is there. */
  | { ok: false; refused: boolean; missing?: boolean; message: string };

/** How a read outside the workspace is decided: true allows it. */
export type AskPerson = (realPath: string, reason: string) => Promise<boolean>;

function errorText(error: unknown): string {
  if (error instanceof AgentFileError) return error.message;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') return 'it is a symbolic link';
  return errorMessage(error);
}

export class AgentFileAccess {
  readonly #workspace: string;
  readonly #home: string | AgentDirs;
  readonly #maxReadBytes: number;
  readonly #secretFiles: readonly string[];
  readonly #withheld: ((filePath: string) => boolean) | undefined;
  /** Plan files this session's agent created, and what it wrote there. */
  readonly #sessionPlans = new Map<string, string>();
  #workspaceReal: Promise<string> | undefined;
  #secretReal: Promise<string[]> | undefined;
  #secretIdentities: Promise<Set<FileIdentity>> | undefined;

  /** An agent's file requests: its workspace, its folders, what it never reads. */
  static forAgent(
    options: Pick<AcpAgentOptions, 'secretFiles' | 'withheld'>,
    workspace: string,
    home: string | AgentDirs,
  ): AgentFileAccess {
    return new AgentFileAccess({ workspace, home, secretFiles: options.secretFiles ?? [], withheld: options.withheld });
  }

  constructor(options: AgentFileAccessOptions) {
    this.#workspace = path.resolve(options.workspace);
    this.#home = options.home;
    this.#maxReadBytes = options.maxReadBytes ?? MAX_AGENT_READ_BYTES;
    this.#secretFiles = (options.secretFiles ?? []).map((file) => path.resolve(file));
    this.#withheld = options.withheld;
  }

  #realWorkspace(): Promise<string> {
    this.#workspaceReal ??= realPathOf(this.#workspace).then((real) => real ?? this.#workspace);
    return this.#workspaceReal;
  }

  #realSecrets(): Promise<string[]> {
    this.#secretReal ??= Promise.all(this.#secretFiles.map(async (file) => [file, (await realPathOf(file)) ?? file])).then((pairs) =>
      pairs.flat(),
    );
    return this.#secretReal;
  }

  #secretIds(): Promise<Set<FileIdentity>> {
    this.#secretIdentities ??= fileIdentities(this.#secretFiles);
    return this.#secretIdentities;
  }

  /** The policy's verdict on reading `requested` (absolute), with the real path it names. */
  async readVerdict(requested: string): Promise<{ verdict: ReadVerdict; real: string | undefined }> {
    const resolved = path.resolve(requested);
    const real = await realPathOf(resolved);
    const verdict = readVerdict({
      requested: resolved,
      real: real ?? resolved,
      workspaceReal: await this.#realWorkspace(),
      secretFiles: await this.#realSecrets(),
      sessionPlanFiles: new Set(this.#sessionPlans.keys()),
      home: this.#home,
      ...(this.#withheld ? { withheld: this.#withheld } : {}),
    });
    return { verdict, real };
  }

  /** fs/read_text_file: the whole file's text, or why not. */
  async read(requested: string, askPerson: AskPerson): Promise<FileOutcome<string>> {
    if (!path.isAbsolute(requested)) return { ok: false, refused: true, message: `The path must be absolute: ${requested}` };
    const resolved = path.resolve(requested);
    const written = this.#sessionPlans.get(resolved);
    if (written !== undefined) return { ok: true, value: written };
    const { verdict, real } = await this.readVerdict(resolved);
    if (verdict.kind === 'refuse') return { ok: false, refused: true, message: verdict.message };
    if (real === undefined) return { ok: false, refused: false, missing: true, message: `Could not read ${resolved}: no such file.` };
    if (verdict.kind === 'ask' && !(await askPerson(real, verdict.reason))) {
      return { ok: false, refused: true, message: `Ultraplan did not read ${resolved}: the person denied reading outside the workspace.` };
    }
    // The real path, checked above, is what is opened (a final symlink swapped in since is refused).
    try {
      return { ok: true, value: await readAgentFile(real, this.#maxReadBytes, await this.#secretIds(), this.#withheld !== undefined) };
    } catch (error) {
      return { ok: false, refused: error instanceof AgentFileError, message: `Could not read ${resolved}: ${errorText(error)}` };
    }
  }

  /** fs/write_text_file under the policy; `planning` until the reviewer approves. */
  async write(requested: string, content: string, planning: boolean): Promise<FileOutcome<'plan' | 'file'>> {
    const resolved = path.resolve(requested);
    const policy = { workspace: this.#workspace, planning, sessionPlanFiles: new Set(this.#sessionPlans.keys()), home: this.#home };
    let existing;
    try {
      existing = path.isAbsolute(requested) ? await existingFile(resolved) : null;
    } catch (error) {
      return { ok: false, refused: false, message: `Could not write ${resolved}: ${errorText(error)}` };
    }
    let verdict: WriteVerdict = writeVerdict({ ...policy, filePath: requested, existing });
    // The same check where the write would really land: a symlinked folder on the way (plans/ ->
    // src/, away/ -> ~/.bashrc.d) must not carry a write past the policy.
    if (verdict.allowed) {
      const real = await realWriteTarget(resolved);
      if (real === undefined) {
        verdict = {
          allowed: false,
          message: `Ultraplan refused to write ${resolved}: it is a symbolic link to a file that does not exist.`,
        };
      } else if (real !== resolved) {
        const sessionPlanFiles = this.#sessionPlans.has(resolved) ? new Set([...policy.sessionPlanFiles, real]) : policy.sessionPlanFiles;
        verdict = writeVerdict({ ...policy, workspace: await this.#realWorkspace(), sessionPlanFiles, filePath: real, existing });
      }
    }
    if (!verdict.allowed) return { ok: false, refused: true, message: verdict.message };
    try {
      await mkdir(path.dirname(resolved), { recursive: true });
      await writeAgentFile(resolved, content, existing === null);
    } catch (error) {
      return { ok: false, refused: error instanceof AgentFileError, message: `Could not write ${resolved}: ${errorText(error)}` };
    }
    if (!planning) return { ok: true, value: 'file' };
    this.#sessionPlans.set(resolved, content);
    return { ok: true, value: 'plan' };
  }

  /**
   * The text of the plan file an exit request names: only a Markdown file this session's agent
   * wrote, or one in its own plans folder; never an existing file of the workspace that the agent
   * merely names (that would show, and trust, any file as "the plan").
   */
  async namedPlan(named: string): Promise<FileOutcome<string>> {
    const resolved = path.resolve(this.#workspace, named);
    const written = this.#sessionPlans.get(resolved);
    if (written !== undefined) return { ok: true, value: written };
    const { verdict, real } = await this.readVerdict(resolved);
    const workspaceReal = await this.#realWorkspace();
    if (verdict.kind !== 'allow' || real === undefined || isInside(workspaceReal, real)) {
      return { ok: false, refused: true, message: `it is not a plan file this session wrote or one in the agent's own plans folder` };
    }
    try {
      const existing = await existingFile(resolved);
      if (!existing || existing.symlink || existing.links > 1) return { ok: false, refused: true, message: 'it is a link' };
      return { ok: true, value: await readAgentFile(real, this.#maxReadBytes, await this.#secretIds()) };
    } catch (error) {
      return { ok: false, refused: false, message: errorText(error) };
    }
  }
}
