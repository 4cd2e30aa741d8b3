// The ACP SDK, loaded the first time an ACP agent starts: it is a fifth of the extension's code,
// and most sessions (the demo, a server, Claude Code on the web) never need it. In the bundles it
// is a file of its own (dist/vendor-acp-sdk.js, see scripts/lazy-files.cjs) with its own copy of zod, so its
// initialisation never interleaves with ours; under tsx (tests) it comes from node_modules. The
// package is ESM-only; Node 20.19+ and tsx load it with require(). Every bundle that includes this
// file must map the package to that file: bundled inline, this require() makes esbuild initialise
// zod lazily and a schema built first finds it half done ("ZodLiteral is not a constructor").
type AcpSdk = typeof import('@agentclientprotocol/sdk', { with: { 'resolution-mode': 'import' } });

let loaded: AcpSdk | undefined;

export function acpSdk(): AcpSdk {
  loaded ??= require('@agentclientprotocol/sdk') as AcpSdk;
  return loaded;
}
