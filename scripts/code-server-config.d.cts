export declare const CODE_SERVER_VERSION: string;
export declare const VSCODE_VERSION: string;
export declare function cacheRoot(): string;
export declare function codeServerHome(): string;
export declare function codeServerMarker(): string;
export declare function codeServerEntry(): string;
