/** Installs each pinned agent not yet cached; answers the program of each by id. */
export declare function setupAgents(ids?: string[]): Promise<Record<string, string>>;
