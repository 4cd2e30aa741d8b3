import type { BuildOptions } from 'esbuild';

/** Our Node programs' entry points: output name -> source file (from the repo root). */
export declare const NODE_ENTRIES: Readonly<Record<string, string>>;
/** The options of package.json `main`, the CommonJS bootstrap (esbuild.mjs). */
export declare function bootstrapBuild(options?: { outdir?: string; production?: boolean }): BuildOptions & { metafile: true };
/** The options of the one ES module graph of our Node programs (esbuild.mjs). */
export declare function nodeGraph(options?: {
  entryPoints?: Record<string, string>;
  outdir?: string;
  production?: boolean;
}): BuildOptions & {
  metafile: true;
};
