export declare interface AgentPackage {
  package: string;
  version: string;
  bin: string;
  node: string;
  args: string[];
}
export declare const PACKAGES: Record<string, AgentPackage>;
export declare function cacheRoot(): string;
export declare function agentHome(id: string): string;
export declare function agentMarker(id: string): string;
export declare function agentBin(id: string): string;
export declare function privateToolsDir(debianPackage: string): string;
export declare function privateBwrap(): string;
