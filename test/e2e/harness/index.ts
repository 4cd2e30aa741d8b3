// The e2e harness: import everything from here.
export * from './browser';
export * from './browserStorage';
export * from './codeServer';
export * from './hostProbe';
export * from './hostResults';
export * from './installedExtension';
export * from './paths';
export * from './testWindow';
export * from '../../support/wait';
export * from './workbench';
export * from './workspace';
export type {
  EditorState,
  ExtensionState,
  HostSuiteResults,
  HostTestResult,
  ProbeFile,
  TabState,
  TaskExecutionState,
  TerminalState,
} from '../runner-extension/src/wire';
