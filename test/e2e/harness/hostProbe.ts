// Client for the runner extension's probe: asks the extension host what VS Code sees, or runs a
// command there and returns its (JSON-safe) result. Reads the probe file before each call, so it
// follows the extension host across window reloads.
import * as fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import {
  PROBE_TOKEN_HEADER,
  URI_ARG_KEY,
  activationTimingSchema,
  editorStateSchema,
  extensionStateSchema,
  hostSuiteResultsSchema,
  probeFileSchema,
  probeResponseSchema,
  tabStateSchema,
  taskExecutionStateSchema,
  terminalStateSchema,
  type ActivationTiming,
  type EditorState,
  type ExtensionState,
  type HostSuiteResults,
  type ProbeFile,
  type ProbeRequest,
  type TabState,
  type TaskExecutionState,
  type TerminalState,
} from '../runner-extension/src/wire';
import { waitFor } from '../../support/wait';

const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/** A vscode.Uri argument for executeCommand: a file path or a URI string. */
export function uriArg(pathOrUri: string): { [URI_ARG_KEY]: string } {
  return { [URI_ARG_KEY]: /^[a-z][\w+.-]*:/i.test(pathOrUri) ? pathOrUri : pathToFileURL(pathOrUri).href };
}

export class HostProbe {
  constructor(
    private readonly probeFile: string,
    private readonly token: string,
  ) {}

  /** The current probe address, or undefined before the runner extension has started. */
  announcement(): ProbeFile | undefined {
    try {
      return probeFileSchema.parse(JSON.parse(fs.readFileSync(this.probeFile, 'utf8')));
    } catch {
      return undefined;
    }
  }

  /**
   * Waits until the extension host answers (it starts only once a browser has connected).
   * With `after`, waits for a newer extension host than that one (after a window reload).
   */
  async ready(options: { timeoutMs?: number; after?: ProbeFile } = {}): Promise<ProbeFile> {
    return waitFor(
      async () => {
        const current = this.announcement();
        if (!current || (options.after && current.startedAt === options.after.startedAt && current.pid === options.after.pid))
          return undefined;
        return (
          (await this.post(current, { op: 'ping' }, 2_000)
            .then(() => current)
            .catch(() => undefined)) ?? undefined
        );
      },
      { timeoutMs: options.timeoutMs ?? 60_000, intervalMs: 250, message: 'the extension host (test runner probe) to answer' },
    );
  }

  private async post(at: ProbeFile, request: ProbeRequest, timeoutMs: number): Promise<unknown> {
    const response = await fetch(`http://127.0.0.1:${at.port}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [PROBE_TOKEN_HEADER]: this.token },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const answer = probeResponseSchema.parse(await response.json());
    if (!answer.ok) throw new Error(`probe ${request.op} failed in the extension host: ${answer.error}`);
    return answer.value;
  }

  /** One request; waits for the probe to be up first (bounded by timeoutMs as a whole). */
  async call(request: ProbeRequest, timeoutMs = DEFAULT_CALL_TIMEOUT_MS): Promise<unknown> {
    const started = Date.now();
    const at = await this.ready({ timeoutMs });
    return this.post(at, request, Math.max(1_000, timeoutMs - (Date.now() - started)));
  }

  /**
   * vscode.commands.executeCommand in the extension host; the result made JSON-safe (Uris as
   * strings). Pass a Uri as uriArg(path).
   */
  executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    return this.call({ op: 'executeCommand', command, args });
  }

  async commands(prefix = ''): Promise<string[]> {
    return z.array(z.string()).parse(await this.call({ op: 'commands', prefix }));
  }

  async extension(id: string, options: { activate?: boolean } = {}): Promise<ExtensionState> {
    return extensionStateSchema.parse(await this.call({ op: 'extension', id, activate: options.activate ?? false }));
  }

  /** Activates an extension and says how long `await extension.activate()` took in the host. */
  async activateTimed(id: string): Promise<ActivationTiming> {
    return activationTimingSchema.parse(await this.call({ op: 'activateTimed', id }));
  }

  async editors(): Promise<EditorState[]> {
    return z.array(editorStateSchema).parse(await this.call({ op: 'editors' }));
  }

  async tabs(): Promise<TabState[]> {
    return z.array(tabStateSchema).parse(await this.call({ op: 'tabs' }));
  }

  async terminals(): Promise<TerminalState[]> {
    return z.array(terminalStateSchema).parse(await this.call({ op: 'terminals' }));
  }

  async taskExecutions(): Promise<TaskExecutionState[]> {
    return z.array(taskExecutionStateSchema).parse(await this.call({ op: 'taskExecutions' }));
  }

  getConfiguration(section: string, key: string): Promise<unknown> {
    return this.call({ op: 'getConfiguration', section, key });
  }

  async updateConfiguration(section: string, key: string, value: unknown, target: 'global' | 'workspace' = 'global'): Promise<void> {
    await this.call({ op: 'updateConfiguration', section, key, value, target });
  }

  /** Runs a bundled in-host suite now and returns its results (does not throw on test failures). */
  async runSuite(suite: string, options: { grep?: string; timeoutMs?: number } = {}): Promise<HostSuiteResults> {
    const request: ProbeRequest = options.grep ? { op: 'runSuite', suite, grep: options.grep } : { op: 'runSuite', suite };
    return hostSuiteResultsSchema.parse(await this.call(request, options.timeoutMs ?? 10 * 60_000));
  }
}
