// The file system under an agent's fs/read_text_file and fs/write_text_file: what lstat says of a
// target, where a path really lands, and reads and writes through a descriptor that was checked
// (fstat) before a byte moves. Every open is non-blocking, so a FIFO or a device named by a hostile
// agent can never hold one of libuv's few threads, which the session journal also needs.
import { constants } from 'node:fs';
import { lstat, open, stat, type FileHandle } from 'node:fs/promises';
import type { ExistingFile } from './readOnlyPolicy';

/** The largest file an agent may read through the client (a plan, a source file; not a disk image). */
export const MAX_AGENT_READ_BYTES = 8 * 1024 * 1024;

/** A refusal the agent should read as is (the policy's or the file system's answer). */
export class AgentFileError extends Error {}

/** What lstat says of `file`, or null when nothing is there. */
export async function existingFile(file: string): Promise<ExistingFile | null> {
  try {
    const stats = await lstat(file);
    return { symlink: stats.isSymbolicLink(), regular: stats.isFile(), links: stats.nlink };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

async function checkWritable(handle: FileHandle, file: string): Promise<void> {
  const stats = await handle.stat();
  if (!stats.isFile()) throw new AgentFileError(`${file} is not a regular file; Ultraplan writes regular files only.`);
  if (stats.nlink > 1) throw new AgentFileError(`${file} has ${stats.nlink} hard links, so writing it would change another file too.`);
}

/** A file's identity on its device (survives renames and hard links). */
export type FileIdentity = string;

/** The identities of `files` that exist (a secret's other hard links share its identity). */
export async function fileIdentities(files: readonly string[]): Promise<Set<FileIdentity>> {
  const found = await Promise.all(
    files.map((file) =>
      stat(file).then(
        (s) => `${s.dev}:${s.ino}`,
        () => undefined,
      ),
    ),
  );
  return new Set(found.filter((id): id is string => id !== undefined));
}

/**
 * Reads `file` as UTF-8 through one descriptor: opened without following a final symlink and
 * without blocking, refused unless fstat says a regular file of at most `maxBytes` that is none
 * of `refused` (by identity, so another hard link to a secret is refused too).
 */
export async function readAgentFile(
  file: string,
  maxBytes = MAX_AGENT_READ_BYTES,
  refused: ReadonlySet<FileIdentity> = new Set(),
  /** Refuse a file with more than one name: a withheld file's other name cannot be told by its path. */
  refuseLinked = false,
): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw new AgentFileError(`${file} is not a regular file (a FIFO, a device or a folder); Ultraplan reads regular files only.`);
    }
    if (refused.has(`${stats.dev}:${stats.ino}`))
      throw new AgentFileError(`${file} is another name of a file that holds a secret of Ultraplan's.`);
    if (refuseLinked && stats.nlink > 1)
      throw new AgentFileError(
        `${file} has ${stats.nlink} names (hard links); this review withholds files that look like secrets, and another name of it may be one.`,
      );
    if (stats.size > maxBytes) {
      throw new AgentFileError(`${file} is ${stats.size} bytes; Ultraplan reads files of at most ${maxBytes} bytes for an agent.`);
    }
    // One byte more than allowed tells a file that grew since fstat.
    const buffer = Buffer.alloc(Math.min(maxBytes, stats.size) + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > maxBytes) throw new AgentFileError(`${file} grew past ${maxBytes} bytes while it was read.`);
    return buffer.subarray(0, filled).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Writes `content` to `file` through one descriptor: a new file is created exclusively, an
 * existing one is opened without following a symlink and checked (a regular file with one link)
 * before it is truncated, so a swap after the policy's check cannot redirect the write.
 */
export async function writeAgentFile(file: string, content: string, create: boolean): Promise<void> {
  const flags = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | (create ? constants.O_CREAT | constants.O_EXCL : 0);
  const handle = await open(file, flags, 0o644);
  try {
    await checkWritable(handle, file);
    await handle.truncate(0);
    await handle.writeFile(content, 'utf8');
  } finally {
    await handle.close();
  }
}
