// dist/core.js is a public surface: other tools load it with plain Node, without VS Code. This
// loads the built bundle (npm test builds first) in a separate node process, as they would.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const bundle = path.resolve(__dirname, '../../dist/core.js');

const REQUIRED_FUNCTIONS = [
  'ExitPlanModeScanner',
  'findUltraplanTriggerPositions',
  'hasUltraplanKeyword',
  'replaceUltraplanKeyword',
  'findUltrareviewTriggerPositions',
  'hasUltrareviewKeyword',
  'pollForApprovedPlan',
  'followUntilResult',
  'UltraplanPollError',
  'SessionsError',
  'ToolPermissionTracker',
];
const REQUIRED_SCHEMAS = [
  'AssistantEventSchema',
  'UserEventSchema',
  'ResultEventSchema',
  'SystemEventSchema',
  'ControlRequestEventSchema',
  'ControlResponseEventSchema',
  'KnownEventSchema',
  'AnyEventSchema',
];

// Runs in the child: only `require`, no TypeScript loader, no VS Code.
const probe = `
const core = require(process.argv[1]);
const scanner = new core.ExitPlanModeScanner();
scanner.ingest([{ type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id: 'A', name: 'ExitPlanMode', input: { plan: 'p' } }] } }]);
const verdict = scanner.ingest([{ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'A', content: '## Approved Plan:\\nship it' }] } }]);
const parsed = core.ResultEventSchema.safeParse({ type: 'result', subtype: 'success' });
console.log(JSON.stringify({
  types: Object.fromEntries(Object.entries(core).map(([k, v]) => [k, typeof v])),
  schemaHasParse: Object.fromEntries(Object.entries(core).filter(([k]) => k.endsWith('Schema')).map(([k, v]) => [k, typeof v.safeParse === 'function'])),
  sentinel: core.ULTRAPLAN_TELEPORT_SENTINEL,
  verdict,
  replaced: core.replaceUltraplanKeyword('ULTRAPLAN the cache'),
  parsed: parsed.success,
  errorIsError: new core.UltraplanPollError('stopped', 'x') instanceof Error,
}));
`;

describe('dist/core.js in plain Node', function () {
  before(function () {
    assert.ok(existsSync(bundle), `${bundle} is missing: run \`npm run build\` first (npm test does).`);
  });

  it('exports the public API and it works without a loader', async () => {
    const { stdout } = await run(process.execPath, ['-e', probe, bundle], { timeout: 15_000 });
    const out = JSON.parse(stdout) as {
      types: Record<string, string>;
      schemaHasParse: Record<string, boolean>;
      sentinel: string;
      verdict: unknown;
      replaced: string;
      parsed: boolean;
      errorIsError: boolean;
    };
    for (const name of REQUIRED_FUNCTIONS) assert.equal(out.types[name], 'function', name);
    for (const name of REQUIRED_SCHEMAS) assert.equal(out.schemaHasParse[name], true, name);
    assert.equal(out.sentinel, '__ULTRAPLAN_TELEPORT_LOCAL__');
    assert.deepEqual(out.verdict, { kind: 'approved', plan: 'ship it' });
    assert.equal(out.replaced, 'PLAN the cache');
    assert.equal(out.parsed, true);
    assert.equal(out.errorIsError, true);
  });

  it('does not import vscode (or any other host-only module)', () => {
    const text = readFileSync(bundle, 'utf8');
    assert.doesNotMatch(text, /require\(["']vscode["']\)/);
    assert.doesNotMatch(text, /require\(["'](node:)?(http|https|fs)["']\)/);
  });
});
