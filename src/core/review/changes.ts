// A unified diff (git's format) read into the files it changes: what the size check counts, what
// the finders are sent, and which new-side lines each file changed. Hunks are parsed by jsdiff;
// here only git's per-file framing is split.
import { parsePatch } from 'diff';
import { isSecretPath, type ChangeSize } from './scope';

export interface ChangedFile {
  /** Path relative to the repository root, new side (old side for a deletion). */
  path: string;
  status: 'added' | 'deleted' | 'modified' | 'binary';
  added: number;
  removed: number;
  /** New-side line ranges the change touches (1-based, inclusive). */
  ranges: Array<{ start: number; end: number }>;
  /** This file's part of the diff, as git wrote it. */
  patch: string;
}

export interface ParsedChange {
  files: ChangedFile[];
  /** Files kept back by the secret rule (docs/review.md "Secrets"): never sent. */
  withheld: string[];
  size: ChangeSize;
}

function stripPrefix(name: string | undefined): string | undefined {
  if (!name || name === '/dev/null') return undefined;
  const clean = name.replace(/\t.*$/, '');
  return clean.startsWith('a/') || clean.startsWith('b/') ? clean.slice(2) : clean;
}

function headerPath(chunk: string): string {
  const line = chunk.slice(0, chunk.indexOf('\n') === -1 ? chunk.length : chunk.indexOf('\n'));
  // `diff --git a/p b/p` with the same path on both sides (renames are off): the second half.
  const rest = line.slice('diff --git '.length);
  const half = rest.length / 2;
  return stripPrefix(rest.slice(Math.ceil(half)).trim()) ?? rest;
}

function parseFile(chunk: string): ChangedFile {
  const binary = /^Binary files .* differ$/m.test(chunk) || /^GIT binary patch$/m.test(chunk);
  if (binary) return { path: headerPath(chunk), status: 'binary', added: 0, removed: 0, ranges: [], patch: chunk };
  const [structured] = parsePatch(chunk);
  const newName = stripPrefix(structured?.newFileName);
  const oldName = stripPrefix(structured?.oldFileName);
  let added = 0;
  let removed = 0;
  const ranges: ChangedFile['ranges'] = [];
  for (const hunk of structured?.hunks ?? []) {
    let line = hunk.newStart;
    let open: { start: number; end: number } | undefined;
    for (const text of hunk.lines) {
      const mark = text[0];
      if (mark === '+') {
        added++;
        if (open && open.end >= line - 1) open.end = Math.max(open.end, line);
        else ranges.push((open = { start: line, end: line }));
        line++;
      } else if (mark === '-') {
        removed++;
        // A removal touches the new-side line it stood before.
        const at = Math.max(1, line);
        if (!open || open.end < at - 1) ranges.push((open = { start: at, end: at }));
      } else if (mark === ' ') {
        line++;
      }
    }
  }
  const status = !oldName ? 'added' : !newName ? 'deleted' : 'modified';
  return { path: newName ?? oldName ?? headerPath(chunk), status, added, removed, ranges, patch: chunk };
}

/**
 * Every name a file's part of the diff gives it, on either side: the `---`/`+++` names and each
 * half of the `diff --git` line (split at every space, so a name with spaces yields its pieces
 * too: judging more names only withholds more).
 */
function namesOf(chunk: string): string[] {
  const names = new Set<string>();
  const header = chunk.slice('diff --git '.length, chunk.indexOf('\n') === -1 ? chunk.length : chunk.indexOf('\n'));
  for (const piece of [header.slice(Math.ceil(header.length / 2)).trim(), ...header.split(' ')]) {
    const name = stripPrefix(piece);
    if (name) names.add(name);
  }
  for (const match of chunk.matchAll(/^(?:---|\+\+\+) (.+)$/gm)) {
    const name = stripPrefix(match[1]);
    if (name) names.add(name);
  }
  return [...names];
}

/** The blob ids of the `index old..new` line (the empty blob's zeros left out). */
function blobsOf(chunk: string): string[] {
  const match = /^index ([0-9a-f]+)\.\.([0-9a-f]+)/m.exec(chunk);
  return match ? [match[1]!, match[2]!].filter((id) => !/^0+$/.test(id)) : [];
}

/**
 * Splits git's diff into files and applies the secret rule to every side: a file is withheld when
 * any name it has in the diff (the old side of a deletion or of a blob-to-blob diff too) is a
 * secret's, or when its text on either side is a withheld file's (a secret renamed or copied under
 * a harmless name: the same blob).
 */
export function parseGitDiff(diff: string): ParsedChange {
  const chunks = diff.split(/^(?=diff --git )/m).filter((chunk) => chunk.startsWith('diff --git '));
  const parsed = chunks.map((chunk) => ({ file: parseFile(chunk), names: namesOf(chunk), blobs: blobsOf(chunk) }));
  const secretBlobs = new Set(parsed.filter((p) => p.names.some(isSecretPath)).flatMap((p) => p.blobs));
  const files: ChangedFile[] = [];
  const withheld: string[] = [];
  for (const { file, names, blobs } of parsed) {
    if (names.some(isSecretPath) || blobs.some((id) => secretBlobs.has(id))) withheld.push(file.path);
    else files.push(file);
  }
  return { files, withheld, size: changeSize(files) };
}

export function changeSize(files: readonly ChangedFile[]): ChangeSize {
  let changedLines = 0;
  let diffBytes = 0;
  for (const file of files) {
    changedLines += file.added + file.removed;
    diffBytes += utf8Length(file.patch);
  }
  return { files: files.length, changedLines, diffBytes };
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The diff as sent: the kept files' patches, in order. */
export function diffText(files: readonly ChangedFile[]): string {
  return files.map((file) => file.patch).join('');
}
