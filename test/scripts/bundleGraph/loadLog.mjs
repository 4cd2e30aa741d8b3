// Node module hooks for test/scripts/bundleGraph.test.ts: appends the URL of every file module
// Node loads to the file named by ULTRAPLAN_LOAD_LOG, so the probe can tell which of the graph's
// files were loaded at each of its steps. Registered with `node --import <this file>`.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';

const log = process.env.ULTRAPLAN_LOAD_LOG;

// On the hooks thread (registered below), every load passes here first.
export async function load(url, context, nextLoad) {
  if (log && url.startsWith('file:')) appendFileSync(log, `${url}\n`);
  return nextLoad(url, context);
}

// On the main thread (`--import`): registers this same file as the hooks.
if (!process.env.ULTRAPLAN_LOAD_LOG_HOOKS) {
  process.env.ULTRAPLAN_LOAD_LOG_HOOKS = '1';
  register(import.meta.url);
}
