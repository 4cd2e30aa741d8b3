// The ACP SDK, loaded eagerly. It is ESM-only and this project compiles to CommonJS: tsx and
// esbuild both load it with a static import; only tsc's CommonJS check objects. Eager matters:
// a dynamic import() made esbuild initialise zod lazily, and the bundle then skipped zod's init
// before a namespace import of it ran ("ZodLiteral is not a constructor" in dist/server.js).
// @ts-expect-error TS1479: an ESM-only package from a CommonJS module (bundled by esbuild, run by tsx).
import * as sdk from '@agentclientprotocol/sdk';

export const acpSdk: typeof import('@agentclientprotocol/sdk', { with: { 'resolution-mode': 'import' } }) = sdk;
