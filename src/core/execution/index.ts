// The approved plan as a contract: its steps, the agent's progress mapped onto them, and what
// verification found (docs/execution.md). Pure: usable from the extension, the webview and the CLI.
export * from './sections';
export * from './steps';
export * from './textMatch';
export * from './matching';
export * from './progress';
export * from './checklist';
export * from './verification';
export * from './verificationOutcome';
export * from './verificationPrompts';
export * from './verificationReport';
export { parseVerdictReply, type VerdictReply } from '../review/finding';
