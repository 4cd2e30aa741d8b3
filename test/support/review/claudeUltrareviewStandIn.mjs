#!/usr/bin/env node
// A stand-in for `claude ultrareview` built from Claude Code 2.1.332's own handler (the
// `ultrareview [target]` command and its ultrareviewHandler, read from the published package):
// - options: [target] --json --timeout <minutes> --post --no-post --trust-workspace; anything else
//   is refused as commander refuses it (stderr, exit 1);
// - `--trust-workspace` takes no value: a value after it is refused;
// - without a trusted folder and no terminal to ask on, it does not start (stderr, exit 1);
// - a launch that fails prints "Ultrareview could not launch: <why>" on stderr, exit 1;
// - progress goes to stderr; with --json the review's bugs.json payload goes to stdout followed by
//   a newline: an array of {file_path, start_line, end_line, severity, pr_comment, reasoning}
//   (exit 0, also when empty) or {"error": ..., "reason"?: "stopped"} (exit 1);
// - SIGTERM while waiting ends it at once.
// What it does is read from STANDIN_ULTRAREVIEW (JSON), or from the file STANDIN_ULTRAREVIEW_FILE
// names (for an editor whose environment is fixed when it starts); each call is appended to
// STANDIN_CALLS.
import { appendFileSync, readFileSync } from 'node:fs';

const scenario = JSON.parse(
  process.env.STANDIN_ULTRAREVIEW ??
    (process.env.STANDIN_ULTRAREVIEW_FILE ? readFileSync(process.env.STANDIN_ULTRAREVIEW_FILE, 'utf8') : '{"kind":"empty"}'),
);
const argv = process.argv.slice(2);
if (process.env.STANDIN_CALLS) appendFileSync(process.env.STANDIN_CALLS, JSON.stringify({ argv, cwd: process.cwd() }) + '\n');

function fail(message) {
  process.stderr.write(message + '\n');
  process.exit(1);
}

if (argv[0] !== 'ultrareview') fail(`error: unknown command '${argv[0] ?? ''}' (this stand-in only answers ultrareview)`);
const options = { json: false, post: false, trustWorkspace: false, timeout: undefined };
let target;
for (let i = 1; i < argv.length; i++) {
  const arg = argv[i];
  if (arg === '--json') options.json = true;
  else if (arg === '--post') options.post = true;
  else if (arg === '--no-post') options.post = false;
  else if (arg === '--trust-workspace') {
    options.trustWorkspace = true;
    const next = argv[i + 1];
    if (next !== undefined && !/^-./.test(next))
      fail(
        `Ultrareview did not start: \`--trust-workspace\` takes no value, but ${JSON.stringify(next)} follows it. If you do not trust this folder, leave the flag out.`,
      );
  } else if (arg === '--timeout') options.timeout = argv[++i];
  else if (arg.startsWith('-')) fail(`error: unknown option '${arg}'`);
  else if (target === undefined) target = arg;
  else fail(`error: too many arguments for 'ultrareview'. Expected 1 argument but got ${argv.length - 1}.`);
}

if (!options.trustWorkspace && !scenario.trusted)
  fail(
    'Ultrareview did not start: this folder is not trusted. Or, in a script or CI job, pass `--trust-workspace` to trust the folder for this run only.',
  );
if (scenario.kind === 'launch_failed') fail(`Ultrareview could not launch: ${scenario.message}`);

process.stderr.write('Launched a cloud review of this branch.\n');
process.stderr.write('Waiting for findings (about 10 minutes)…\n');
process.on('SIGTERM', () => process.exit(143));
const delay = scenario.delayMs ?? 0;
setTimeout(() => {
  const payload =
    scenario.kind === 'error'
      ? { error: scenario.error, ...(scenario.reason ? { reason: scenario.reason } : {}) }
      : (scenario.findings ?? []);
  const text = JSON.stringify(payload);
  if (options.json) {
    process.stdout.write(text + '\n');
    process.exit(scenario.kind === 'error' ? 1 : 0);
  }
  if (scenario.kind === 'error') fail(`${scenario.reason === 'stopped' ? 'Review stopped' : 'Review failed'}: ${scenario.error}`);
  process.stdout.write(
    payload.length ? `Review complete — ${payload.length} finding${payload.length === 1 ? '' : 's'}\n` : 'Review complete — no findings.\n',
  );
  process.exit(0);
}, delay);
