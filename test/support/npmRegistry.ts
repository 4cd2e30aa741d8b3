// A strict npm registry on 127.0.0.1 for tests that run the real npm and npx: it answers the two
// requests an install makes of a registry, the package document (packument) and the tarball, for
// the packages a test published to it (packed by the real `npm pack`), and 404 for anything else,
// as the public registry does for a package it does not have. Every request is recorded, and
// answers can be held until the test lets them go, to see what a person sees while npm waits.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface RegistryRequest {
  method: string;
  /** The path as npm sent it (a scoped name's slash is %2f). */
  path: string;
  status: number;
}

interface Published {
  name: string;
  version: string;
  manifest: Record<string, unknown>;
  tarballPath: string;
  tarball: Buffer;
  integrity: string;
  shasum: string;
}

export interface NpmRegistry {
  /** http://127.0.0.1:<port>/ (what `registry=` in an .npmrc names). */
  readonly url: string;
  readonly requests: readonly RegistryRequest[];
  /** Packs `folder` with `npm pack` and serves it from now on. */
  publish(folder: string): Promise<{ name: string; version: string }>;
  /** Until the returned function is called, requests of `kind` wait (answered then, in order). */
  hold(kind: 'packument' | 'tarball'): () => void;
  /** Resolves once a request of `kind` is waiting on a hold. */
  held(kind: 'packument' | 'tarball'): Promise<void>;
  stop(): Promise<void>;
}

/** `npm pack --json` of a folder: the tarball and npm's own integrity and shasum of it. */
async function pack(folder: string, into: string): Promise<Omit<Published, 'tarballPath' | 'manifest'> & { file: string }> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', into], { cwd: folder, timeout: 60_000 });
  const [packed] = JSON.parse(stdout) as Array<{ name: string; version: string; filename: string; integrity: string; shasum: string }>;
  if (!packed) throw new Error(`npm pack of ${folder} printed no package`);
  const file = path.join(into, path.basename(packed.filename));
  return {
    name: packed.name,
    version: packed.version,
    integrity: packed.integrity,
    shasum: packed.shasum,
    file,
    tarball: await readFile(file),
  };
}

export async function startNpmRegistry(): Promise<NpmRegistry> {
  const packDir = await mkdtemp(path.join(tmpdir(), 'ultraplan-registry-'));
  const packages = new Map<string, Published[]>();
  const requests: RegistryRequest[] = [];
  const holds = new Map<'packument' | 'tarball', { waiting: Array<() => void>; noticed: Array<() => void> }>();
  let url = '';

  const waitIfHeld = (kind: 'packument' | 'tarball'): Promise<void> | undefined => {
    const hold = holds.get(kind);
    if (!hold) return undefined;
    for (const notice of hold.noticed.splice(0)) notice();
    return new Promise((resolve) => hold.waiting.push(resolve));
  };

  const packument = (name: string): Record<string, unknown> | undefined => {
    const versions = packages.get(name);
    if (!versions) return undefined;
    return {
      name,
      'dist-tags': { latest: versions.at(-1)!.version },
      versions: Object.fromEntries(
        versions.map((p) => [
          p.version,
          {
            ...p.manifest,
            name,
            version: p.version,
            dist: { tarball: `${url}${p.tarballPath.slice(1)}`, integrity: p.integrity, shasum: p.shasum },
          },
        ]),
      ),
    };
  };

  const server = http.createServer((req, res) => {
    const requestPath = (req.url ?? '/').split('?')[0]!;
    const answer = (status: number, body: Buffer | string, type: string): void => {
      requests.push({ method: req.method ?? '?', path: requestPath, status });
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const notFound = (): void => answer(404, JSON.stringify({ error: 'Not found' }), 'application/json');
    void (async () => {
      if (req.method !== 'GET') return answer(405, JSON.stringify({ error: 'method not allowed' }), 'application/json');
      const tarball = [...packages.values()].flat().find((p) => p.tarballPath === requestPath);
      if (tarball) {
        await waitIfHeld('tarball');
        return answer(200, tarball.tarball, 'application/octet-stream');
      }
      // A package document: /name or /@scope%2fname (npm escapes the scope's slash).
      const name = decodeURIComponent(requestPath.slice(1));
      if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/.test(name)) return notFound();
      await waitIfHeld('packument');
      const doc = packument(name);
      return doc ? answer(200, JSON.stringify(doc), 'application/json') : notFound();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  return {
    url,
    requests,
    async publish(folder) {
      const packed = await pack(folder, packDir);
      const manifest = JSON.parse(await readFile(path.join(folder, 'package.json'), 'utf8')) as Record<string, unknown>;
      const published: Published = {
        ...packed,
        manifest,
        // Where the public registry keeps them: /<name>/-/<unscoped name>-<version>.tgz
        tarballPath: `/${packed.name}/-/${packed.name.split('/').at(-1)}-${packed.version}.tgz`,
      };
      packages.set(packed.name, [...(packages.get(packed.name) ?? []), published]);
      return { name: packed.name, version: packed.version };
    },
    hold(kind) {
      const hold = holds.get(kind) ?? { waiting: [], noticed: [] };
      holds.set(kind, hold);
      return () => {
        if (holds.get(kind) === hold) holds.delete(kind);
        for (const release of hold.waiting.splice(0)) release();
      };
    },
    held(kind) {
      const hold = holds.get(kind);
      if (!hold) return Promise.reject(new Error(`${kind} requests are not held`));
      if (hold.waiting.length > 0) return Promise.resolve();
      return new Promise((resolve) => hold.noticed.push(resolve));
    },
    async stop() {
      for (const kind of [...holds.keys()]) for (const release of holds.get(kind)!.waiting.splice(0)) release();
      holds.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(packDir, { recursive: true, force: true });
    },
  };
}
