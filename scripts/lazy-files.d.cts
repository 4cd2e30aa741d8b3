import type { Plugin } from 'esbuild';

export declare interface LazyFile {
  module: string;
  file: string;
}
export declare const LAZY_FILES: readonly LazyFile[];
export declare function lazyFilesPlugin(dir?: string): Plugin;
