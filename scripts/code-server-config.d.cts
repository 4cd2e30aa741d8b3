export declare const CODE_SERVER_VERSION: string;
export declare const VSCODE_VERSION: string;
export declare function cacheRoot(): string;
export declare function codeServerHome(): string;
export declare function codeServerMarker(): string;
export declare function codeServerEntry(): string;
export declare const WORKBENCH_SETTINGS: Readonly<Record<string, unknown>>;
export declare function codeServerArgs(options: {
  port: number;
  userDataDir: string;
  extensionsDir: string;
  workspace: string;
  workspaceTrust?: boolean;
}): string[];
export declare function codeServerEnv(env: Record<string, string | undefined>): Record<string, string>;
