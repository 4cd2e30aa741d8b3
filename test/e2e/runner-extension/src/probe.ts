// A small HTTP server inside the extension host so an e2e test can ask what VS Code sees
// (editors, tabs, tasks, an extension's state) or run a command and get its result. It lives in
// the test runner extension, so the shipped extension carries no test hooks.
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  PROBE_TOKEN_HEADER,
  URI_ARG_KEY,
  type EditorState,
  type ExtensionState,
  type ActivationTiming,
  type ProbeFile,
  type ProbeResponse,
  type TabState,
  type TaskExecutionState,
  type TerminalState,
  probeRequestSchema,
} from './wire';

const MAX_BODY_BYTES = 1_000_000;

/** Turns command results into JSON: Uris as strings, no functions, no cycles. */
export function toJsonSafe(value: unknown): unknown {
  const seen = new WeakSet<object>();
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof vscode.Uri) return v.toString();
    if (typeof v === 'function' || typeof v === 'symbol') return undefined;
    if (typeof v === 'bigint') return v.toString();
    if (v instanceof Map) return Object.fromEntries(v);
    if (v instanceof Set) return [...v];
    if (v && typeof v === 'object') {
      if (seen.has(v)) return '[Circular]';
      seen.add(v);
    }
    return v;
  });
  return text === undefined ? null : (JSON.parse(text) as unknown);
}

/** Probe arguments are JSON; `{ "$uri": "file:///…" }` stands for a vscode.Uri (see harness uriArg). */
export function reviveArgs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reviveArgs);
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 1 && entries[0]?.[0] === URI_ARG_KEY && typeof entries[0][1] === 'string')
      return vscode.Uri.parse(entries[0][1]);
    return Object.fromEntries(entries.map(([k, v]) => [k, reviveArgs(v)]));
  }
  return value;
}

function tabState(tab: vscode.Tab, group: number): TabState {
  const input = tab.input;
  const base = { label: tab.label, isActive: tab.isActive, group };
  if (input instanceof vscode.TabInputText) return { ...base, kind: 'text', uri: input.uri.toString() };
  if (input instanceof vscode.TabInputTextDiff) return { ...base, kind: 'diff', uri: input.modified.toString() };
  if (input instanceof vscode.TabInputWebview) return { ...base, kind: 'webview', viewType: input.viewType };
  if (input instanceof vscode.TabInputCustom) return { ...base, kind: 'custom', uri: input.uri.toString(), viewType: input.viewType };
  if (input instanceof vscode.TabInputNotebook) return { ...base, kind: 'notebook', uri: input.uri.toString() };
  if (input instanceof vscode.TabInputTerminal) return { ...base, kind: 'terminal' };
  return { ...base, kind: 'other' };
}

export interface ProbeHandlers {
  runSuite(suite: string, grep: string | undefined): Promise<unknown>;
}

async function answer(body: unknown, handlers: ProbeHandlers): Promise<unknown> {
  const request = probeRequestSchema.parse(body);
  switch (request.op) {
    case 'ping':
      return { pid: process.pid };
    case 'executeCommand':
      return toJsonSafe(await vscode.commands.executeCommand(request.command, ...request.args.map(reviveArgs)));
    case 'commands':
      return (await vscode.commands.getCommands(true)).filter((c) => c.startsWith(request.prefix)).sort();
    case 'extension': {
      const extension = vscode.extensions.getExtension(request.id);
      if (!extension) return { present: false, isActive: false, exportKeys: [] } satisfies ExtensionState;
      if (request.activate) await extension.activate();
      // Reading exports of an extension that is not active throws ("not known or not activated").
      const exported: unknown = extension.isActive ? extension.exports : undefined;
      const state: ExtensionState = {
        present: true,
        isActive: extension.isActive,
        version: String((extension.packageJSON as { version?: unknown }).version ?? ''),
        exportKeys: exported && typeof exported === 'object' ? Object.keys(exported) : [],
      };
      return state;
    }
    case 'activateTimed': {
      const extension = vscode.extensions.getExtension(request.id);
      if (!extension) throw new Error(`no extension ${request.id} in this extension host`);
      const wasActive = extension.isActive;
      // Timed here, not across the probe's HTTP round trip, so the figure is the activation alone.
      const start = performance.now();
      await extension.activate();
      const ms = performance.now() - start;
      return { wasActive, isActive: extension.isActive, ms } satisfies ActivationTiming;
    }
    case 'editors': {
      const active = vscode.window.activeTextEditor?.document.uri.toString();
      return vscode.window.visibleTextEditors.map((e): EditorState => ({
        uri: e.document.uri.toString(),
        languageId: e.document.languageId,
        text: e.document.getText(),
        isDirty: e.document.isDirty,
        active: e.document.uri.toString() === active,
      }));
    }
    case 'tabs':
      return vscode.window.tabGroups.all.flatMap((group, index) => group.tabs.map((tab) => tabState(tab, index)));
    case 'terminals':
      return vscode.window.terminals.map((t): TerminalState => ({ name: t.name, exitCode: t.exitStatus?.code ?? null }));
    case 'taskExecutions':
      return vscode.tasks.taskExecutions.map((t): TaskExecutionState => ({
        name: t.task.name,
        source: t.task.source,
        definition: toJsonSafe(t.task.definition),
      }));
    case 'getConfiguration':
      return toJsonSafe(vscode.workspace.getConfiguration(request.section).get(request.key) ?? null);
    case 'updateConfiguration': {
      const target = request.target === 'workspace' ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
      await vscode.workspace.getConfiguration(request.section).update(request.key, request.value, target);
      return null;
    }
    case 'runSuite':
      return handlers.runSuite(request.suite, request.grep);
  }
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`probe request larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Listens on 127.0.0.1 (a free port) and announces the port in probeFile. */
export async function startProbe(options: {
  probeFile: string;
  token: string;
  handlers: ProbeHandlers;
  log: (line: string) => void;
}): Promise<vscode.Disposable> {
  const server = http.createServer((req, res) => {
    const reply = (status: number, payload: ProbeResponse) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (req.method !== 'POST' || req.headers[PROBE_TOKEN_HEADER] !== options.token) {
      reply(403, { ok: false, error: 'POST with the probe token header only' });
      return;
    }
    readBody(req)
      .then((text) => answer(JSON.parse(text) as unknown, options.handlers))
      .then(
        (value) => reply(200, { ok: true, value: value ?? null }),
        (err: unknown) => {
          const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
          options.log(`probe request failed: ${message}`);
          reply(200, { ok: false, error: message });
        },
      );
  });
  // runSuite may take minutes; no server-side timeout on a test channel.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const announcement: ProbeFile = { port, pid: process.pid, startedAt: new Date().toISOString() };
  fs.mkdirSync(path.dirname(options.probeFile), { recursive: true });
  const temp = `${options.probeFile}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(announcement));
  fs.renameSync(temp, options.probeFile);
  options.log(`probe listening on 127.0.0.1:${port}`);
  return new vscode.Disposable(() => {
    server.closeAllConnections();
    server.close();
  });
}
