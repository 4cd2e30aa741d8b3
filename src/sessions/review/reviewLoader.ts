// The review runtime (git collection, the fleet, Claude Code's review, and the diff parser) is
// loaded when the first review starts, not with the extension: in the bundles it is a file of its
// own (dist/review-runtime.js, scripts/lazy-files.cjs); under tsx (tests) it is the source module.
type ReviewModule = typeof import('./review');

let runtime: ReviewModule | undefined;

export function reviewRuntime(): ReviewModule {
  runtime ??= require('./review') as ReviewModule;
  return runtime;
}
