// A stand-in for the GitHub API as the real `gh pr diff N` calls it (GitHub CLI 2.23.0, Debian's
// package), built from the requests that gh sent to a server that only recorded them. With
// GH_HOST=127.0.0.1:PORT, GH_REPO=127.0.0.1:PORT/OWNER/REPO and GH_ENTERPRISE_TOKEN it makes exactly
// one request:
//   GET /api/v3/repos/OWNER/REPO/pulls/N
//   accept: application/vnd.github.v3.diff · authorization: token TOKEN · user-agent: GitHub CLI …
// over HTTPS (gh speaks only HTTPS to an enterprise host; the certificate is a throwaway one made
// with openssl and given to gh through SSL_CERT_FILE). It answers the pull request's diff as text,
// GitHub's 401 "Bad credentials" for another token and 404 for an unknown pull request; a request
// gh never sends is refused with 400 and kept in `refused`, so a test sees it.
// GH_REPO names the repository because gh matches a git remote to GH_HOST without its port.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export interface GitHubRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

const PULL_DIFF = /^\/api\/v3\/repos\/([\w.-]+)\/([\w.-]+)\/pulls\/(\d+)$/;

export class GitHubApiStandIn {
  readonly requests: GitHubRequest[] = [];
  readonly refused: string[] = [];
  #server: Server | undefined;
  #dir = '';

  /** `pulls`: "OWNER/REPO#N" → the diff GitHub serves for that pull request. */
  constructor(
    private readonly token: string,
    private readonly pulls: Record<string, string>,
  ) {}

  async start(): Promise<this> {
    this.#dir = mkdtempSync(path.join(tmpdir(), 'ultraplan-github-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ].concat(['-keyout', this.key, '-out', this.cert]),
      { stdio: 'ignore' },
    );
    const server = createServer({ key: readFileSync(this.key), cert: readFileSync(this.cert) }, (request, response) => {
      const logged = { method: request.method ?? '', url: request.url ?? '', headers: request.headers };
      this.requests.push(logged);
      request.resume();
      const json = (status: number, body: unknown) =>
        response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
      const pull = PULL_DIFF.exec(logged.url);
      const userAgent = String(request.headers['user-agent'] ?? '');
      if (
        logged.method !== 'GET' ||
        !pull ||
        request.headers.accept !== 'application/vnd.github.v3.diff' ||
        !userAgent.startsWith('GitHub CLI ')
      ) {
        this.refused.push(`${logged.method} ${logged.url} (accept: ${String(request.headers.accept)}, user-agent: ${userAgent})`);
        json(400, { message: 'not what gh pr diff sends' });
        return;
      }
      if (request.headers.authorization !== `token ${this.token}`) {
        json(401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
        return;
      }
      const diff = this.pulls[`${pull[1]}/${pull[2]}#${pull[3]}`];
      if (diff === undefined) {
        json(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest/pulls/pulls#get-a-pull-request' });
        return;
      }
      response.writeHead(200, { 'content-type': 'application/vnd.github.v3.diff; charset=utf-8' }).end(diff);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
    return this;
  }

  get host(): string {
    return `127.0.0.1:${(this.#server?.address() as AddressInfo).port}`;
  }

  get key(): string {
    return path.join(this.#dir, 'key.pem');
  }

  get cert(): string {
    return path.join(this.#dir, 'cert.pem');
  }

  /** The environment that points the real gh at this stand-in for `repo` ("OWNER/REPO"), logged in with `token`. */
  ghEnv(repo: string, token = this.token): Record<string, string> {
    return {
      GH_HOST: this.host,
      GH_REPO: `${this.host}/${repo}`,
      GH_ENTERPRISE_TOKEN: token,
      SSL_CERT_FILE: this.cert,
      GH_CONFIG_DIR: path.join(this.#dir, 'gh-config'),
      GH_NO_UPDATE_NOTIFIER: '1',
      GH_PROMPT_DISABLED: '1',
    };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
  }
}
