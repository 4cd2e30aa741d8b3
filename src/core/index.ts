// The public surface of dist/core.js: pure logic, no vscode, usable from plain Node.
export * from './protocol';
export * from './errors';
export type * from './transport';
export * from './scanner';
export * from './keyword';
export * from './poller';
export * from './permissionRequests';
export * from './eventBatch';
