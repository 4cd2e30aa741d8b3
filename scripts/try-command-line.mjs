// What the try-* scripts (docs/team.md, "Try it on one machine") share on their command line: one
// flag, --port, and a refusal worded as `NAME: why` with exit code 1.
import { parseArgs } from 'node:util';

/** Writes `NAME: message` to stderr and exits 1. */
export function fail(name, message) {
  process.stderr.write(`${name}: ${message}\n`);
  process.exit(1);
}

/** The --port of `node scripts/NAME.mjs [--port N]`; --help prints the usage and exits 0. */
export function portFlag(name, defaultPort) {
  const usage = `Usage: node scripts/${name}.mjs [--port N]   (default ${defaultPort})`;
  let values;
  try {
    values = parseArgs({ options: { port: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true }).values;
  } catch (err) {
    fail(name, `${err.message}\n${usage}`);
  }
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const text = values.port ?? String(defaultPort);
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535)
    fail(name, `--port must be 1 to 65535, got ${JSON.stringify(text)}`);
  return Number(text);
}
