// What crosses between the e2e harness (outside code-server) and the test runner extension
// (inside its extension host): the probe file, probe requests and answers, and suite results.
// Both sides parse with these schemas, so a drift shows up as a clear error, not a hang.
import { z } from 'zod';

/** Environment variables the harness sets on code-server; code-server passes them to the extension host. */
export const RUNNER_ENV = {
  /** Name of a bundled in-host suite (out/suites/<name>.js) or an absolute path to a bundled file. */
  suite: 'ULTRAPLAN_TEST_SUITE',
  /** Where the runner writes the suite's results (JSON, HostSuiteResults). */
  results: 'ULTRAPLAN_TEST_RESULTS',
  /** Where the runner writes its probe address (JSON, ProbeFile) once it listens. */
  probeFile: 'ULTRAPLAN_TEST_PROBE_FILE',
  /** Shared secret the probe requires in the PROBE_TOKEN_HEADER header. */
  probeToken: 'ULTRAPLAN_TEST_PROBE_TOKEN',
  /** Optional mocha grep for the in-host suite. */
  grep: 'ULTRAPLAN_TEST_GREP',
} as const;

export const PROBE_TOKEN_HEADER = 'x-ultraplan-probe-token';

/** In executeCommand arguments, `{ [URI_ARG_KEY]: uriString }` is revived as a vscode.Uri in the host. */
export const URI_ARG_KEY = '$uri';

export const probeFileSchema = z.object({
  port: z.number().int().positive(),
  pid: z.number().int(),
  /** Changes on every extension host start, so a harness can tell a reload happened. */
  startedAt: z.string(),
});
export type ProbeFile = z.infer<typeof probeFileSchema>;

export const probeRequestSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('ping') }),
  z.object({ op: z.literal('executeCommand'), command: z.string().min(1), args: z.array(z.unknown()).default([]) }),
  z.object({ op: z.literal('commands'), prefix: z.string().default('') }),
  z.object({ op: z.literal('extension'), id: z.string().min(1), activate: z.boolean().default(false) }),
  z.object({ op: z.literal('activateTimed'), id: z.string().min(1) }),
  z.object({ op: z.literal('editors') }),
  z.object({ op: z.literal('tabs') }),
  z.object({ op: z.literal('terminals') }),
  z.object({ op: z.literal('taskExecutions') }),
  z.object({ op: z.literal('getConfiguration'), section: z.string().min(1), key: z.string().min(1) }),
  z.object({
    op: z.literal('updateConfiguration'),
    section: z.string().min(1),
    key: z.string().min(1),
    value: z.unknown(),
    target: z.enum(['global', 'workspace']).default('global'),
  }),
  z.object({ op: z.literal('runSuite'), suite: z.string().min(1), grep: z.string().optional() }),
]);
export type ProbeRequest = z.input<typeof probeRequestSchema>;

export const probeResponseSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), value: z.unknown() }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);
export type ProbeResponse = z.infer<typeof probeResponseSchema>;

export const hostTestResultSchema = z.object({
  fullTitle: z.string(),
  state: z.enum(['passed', 'failed', 'pending']),
  durationMs: z.number().nonnegative().optional(),
  error: z.object({ message: z.string(), stack: z.string().optional() }).optional(),
});
export type HostTestResult = z.infer<typeof hostTestResultSchema>;

export const hostSuiteResultsSchema = z.object({
  suite: z.string(),
  file: z.string(),
  passed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  pending: z.number().int().nonnegative(),
  durationMs: z.number().nonnegative(),
  tests: z.array(hostTestResultSchema),
  /** Set when the suite could not be loaded or run at all (missing bundle, syntax error). */
  loadError: z.string().optional(),
});
export type HostSuiteResults = z.infer<typeof hostSuiteResultsSchema>;

/** What the `editors` op answers. */
export const editorStateSchema = z.object({
  uri: z.string(),
  languageId: z.string(),
  text: z.string(),
  isDirty: z.boolean(),
  active: z.boolean(),
});
export type EditorState = z.infer<typeof editorStateSchema>;

/** What the `tabs` op answers: enough to see that a webview panel or a diff is open. */
export const tabStateSchema = z.object({
  label: z.string(),
  kind: z.enum(['text', 'diff', 'webview', 'custom', 'notebook', 'terminal', 'other']),
  uri: z.string().optional(),
  /** For webviews VS Code reports the view type with a `mainThreadWebview-` prefix. */
  viewType: z.string().optional(),
  isActive: z.boolean(),
  group: z.number().int(),
});
export type TabState = z.infer<typeof tabStateSchema>;

export const extensionStateSchema = z.object({
  present: z.boolean(),
  isActive: z.boolean(),
  version: z.string().optional(),
  /** Keys of the exports object, so a test sees what an extension exposes without the values. */
  exportKeys: z.array(z.string()),
});
export type ExtensionState = z.infer<typeof extensionStateSchema>;

/** What the `activateTimed` op answers: `await extension.activate()` timed inside the extension host. */
export const activationTimingSchema = z.object({
  /** Already active before the call: then `ms` is only the cost of a no-op activate(). */
  wasActive: z.boolean(),
  isActive: z.boolean(),
  /** performance.now() around `await extension.activate()` (module load, activate(), its promise). */
  ms: z.number().nonnegative(),
});
export type ActivationTiming = z.infer<typeof activationTimingSchema>;

export const terminalStateSchema = z.object({ name: z.string(), exitCode: z.number().int().nullable() });
export type TerminalState = z.infer<typeof terminalStateSchema>;

export const taskExecutionStateSchema = z.object({ name: z.string(), source: z.string(), definition: z.unknown() });
export type TaskExecutionState = z.infer<typeof taskExecutionStateSchema>;
