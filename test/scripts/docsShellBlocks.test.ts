// The docs' shell blocks run as written. Every shell block of README.md and docs/*.md (and every
// other fenced block that starts one of our programs) is either run here for real, by the rules of
// test/support/docShellBlocks.ts with the placeholders below replaced, or listed in NOT_RUN with
// the reason; nothing is skipped silently. Each command of ours that is listed is still checked
// against its program's --help: every flag it gives must exist.
//
// Placeholders, replaced by exact text in a block's commands and shown output alike:
//   postgres://ultraplan@db:5432/ultraplan   a fresh database of the section, on one cluster
//   /etc/ultraplan/database/url             a 0400 file holding that database's URL
//   /etc/ultraplan/token/token              a 0400 file holding a random token
//   https://login.example.com/              the tests' OpenID provider (oidc-provider)
//   https://hooks.slack.com/services/…, https://ci.example.com/ultraplan-hook
//                                           a receiver on 127.0.0.1 (nothing leaves the machine)
//   0.0.0.0                                 127.0.0.1 (a test binds no other interface)
//   8787, 8788, 8790, 55432                 free ports, the same for every block of a page (a server
//                                           or try script given no --port gets its default spelt out)
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchAuthMetadata } from '../../src/client/auth/authMetadataRequest';
import { setPlanModeEvent, userMessageEvent } from '../../src/core/protocol';
import {
  commandsOf,
  fencedBlocks,
  flagsOf,
  PageRun,
  secretFileIn,
  startsOurPrograms,
  type Program,
  type ShellBlock,
} from '../support/docShellBlocks';
import { startOpenidProvider, type OpenidProvider } from '../support/openidProvider';
import { freePort, sharedPostgresCluster, type PostgresCluster } from '../support/postgresCluster';
import { signInAs } from '../support/providerSignIn';
import { ensureBundleBuilt, REPO_ROOT, SERVER_JS, tempDir } from '../support/serverProcess';
import { waitFor } from '../support/wait';

const PAGES = [
  'README.md',
  ...readdirSync(`${REPO_ROOT}/docs`)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** Blocks not run here, by page and a line of the block, each with why. */
const NOT_RUN: { file: string; contains: string; why: string }[] = [
  {
    file: 'README.md',
    contains: 'git clone https://github.com/',
    why: 'clones from GitHub (no network but npm and apt here) and opens code-server: `npm start` is what the e2e suite starts',
  },
  { file: 'README.md', contains: 'npm test ', why: 'the whole build and test suite, this test among them (minutes on 2 cores)' },
  {
    file: 'docs/deploy.md',
    contains: 'docker build',
    why: 'needs Docker and a registry (test/scripts/deploy.test.ts reads the Dockerfile)',
  },
  { file: 'docs/deploy.md', contains: 'kubectl create namespace', why: 'needs a Kubernetes cluster' },
  { file: 'docs/deploy.md', contains: 'kubectl apply -k', why: 'needs a Kubernetes cluster' },
  { file: 'docs/deploy.md', contains: 'kubectl -n ultraplan scale', why: 'needs a Kubernetes cluster' },
  {
    file: 'docs/server.md',
    contains: 'curl -s http://127.0.0.1:8787/v1/code/sessions',
    why: 'starts none of our programs: it talks to the server above, with a session id from its own output (cse_8e87…)',
  },
  {
    file: 'docs/review.md',
    contains: 'ultraplan-review --agent acp:claude --finders 3',
    why: 'runs real agents (Claude, Gemini, Codex, billed) on a change, and a GitHub pull request through gh; test/cli runs the same program with scripted agents',
  },
  {
    file: 'docs/execution.md',
    contains: 'ultraplan-review --against-plan PLAN.md',
    why: 'runs real agents (Claude, Codex, billed) against a plan and a change; test/cli/verifyCli.test.ts runs it with scripted agents',
  },
];

const PORTS = ['8787', '8788', '8790', '55432'];

function allBlocks(): ShellBlock[] {
  return PAGES.flatMap((file) => fencedBlocks(file));
}

/** The blocks a reader would run: shell blocks, and any other block that starts our programs. */
function accountable(blocks: ShellBlock[]): ShellBlock[] {
  return blocks.filter((b) => /^(sh|bash|shell|console)$/.test(b.lang) || (b.lang === '' && startsOurPrograms(b)));
}

function notRunEntry(block: ShellBlock): (typeof NOT_RUN)[number] | undefined {
  return NOT_RUN.find((entry) => entry.file === block.file && block.text.includes(entry.contains));
}

/** What is wrong with the accounting: a block neither run nor listed, a listing that names no block. */
function unaccounted(blocks: ShellBlock[], listed = NOT_RUN): string[] {
  const problems: string[] = [];
  for (const block of accountable(blocks)) {
    const entry = listed.find((e) => e.file === block.file && block.text.includes(e.contains));
    if (!entry && !startsOurPrograms(block)) {
      problems.push(`${block.file}:${block.line}: a shell block that starts none of our programs and is not in NOT_RUN (with why)`);
    }
    if (block.lang === '' && startsOurPrograms(block)) problems.push(`${block.file}:${block.line}: starts our programs: mark it \`\`\`sh`);
  }
  for (const entry of listed) {
    if (!blocks.some((b) => b.file === entry.file && b.text.includes(entry.contains))) {
      problems.push(`NOT_RUN names no block of ${entry.file} containing ${JSON.stringify(entry.contains)}`);
    }
  }
  return problems;
}

/** How each program is asked for its --help; scripts/ensure-system-deps.mjs takes no flags at all. */
const HELP_ARGS: Record<Program, string[] | null> = {
  server: [SERVER_JS, '--help'],
  worker: [SERVER_JS, 'worker', '--help'],
  review: [`${REPO_ROOT}/dist/review.mjs`, '--help'],
  'try-postgres': [`${REPO_ROOT}/scripts/try-postgres.mjs`, '--help'],
  'try-issuer': [`${REPO_ROOT}/scripts/try-issuer.mjs`, '--help'],
  'system-deps': null,
};
const helpTexts = new Map<Program, string>();
function helpOf(program: Program): string {
  let text = helpTexts.get(program);
  if (text === undefined) {
    const args = HELP_ARGS[program];
    text = args === null ? '' : execFileSync(process.execPath, args, { encoding: 'utf8' });
    helpTexts.set(program, text);
  }
  return text;
}

/** The flags a block's commands of ours give that their program's --help does not know. */
function unknownFlags(block: ShellBlock): string[] {
  const unknown: string[] = [];
  for (const command of commandsOf(block.text)) {
    if (!command.program) continue;
    for (const flag of flagsOf(command.text)) {
      const known = new RegExp(`(^|[\\s,(])${flag}([^a-z0-9-]|$)`, 'm').test(helpOf(command.program));
      if (!known) unknown.push(`${block.file}:${block.line}: ${flag} (${command.program})`);
    }
  }
  return unknown;
}

interface Shared {
  cluster: PostgresCluster;
  provider: OpenidProvider;
  receiver: string;
  received: string[];
}

/** Each page's run, with its ports; each section's database, made when a block names one. */
class Page {
  readonly run: PageRun;
  private readonly ports = new Map<string, string>();
  private database: { url: string; file: string } | null = null;
  private readonly secrets: string;

  constructor(
    private readonly shared: Shared,
    ports: Record<string, number>,
  ) {
    for (const [port, free] of Object.entries(ports)) this.ports.set(port, String(free));
    this.secrets = tempDir('ultraplan-docs-secrets-');
    const token = secretFileIn(this.secrets, 'token', randomBytes(24).toString('hex'));
    this.run = new PageRun((text) => this.substitute(text, token));
  }

  async newSection(blocks: ShellBlock[]): Promise<void> {
    this.database = null;
    if (blocks.some((b) => b.text.includes('postgres://ultraplan@db:5432/ultraplan') || b.text.includes('/etc/ultraplan/database/url'))) {
      const url = await this.shared.cluster.createDatabase();
      this.database = { url, file: secretFileIn(tempDir('ultraplan-docs-db-'), 'url', url) };
    }
  }

  private substitute(text: string, tokenFile: string): string {
    let out = text
      .replaceAll('https://login.example.com/', this.shared.provider.issuer)
      .replaceAll('https://hooks.slack.com/services/T000/B000/XXXX', `${this.shared.receiver}/slack`)
      .replaceAll('https://ci.example.com/ultraplan-hook', `${this.shared.receiver}/generic`)
      .replaceAll('/etc/ultraplan/token/token', tokenFile)
      .replaceAll('0.0.0.0', '127.0.0.1');
    if (this.database) {
      out = out
        .replaceAll('postgres://ultraplan@db:5432/ultraplan', this.database.url)
        .replaceAll('/etc/ultraplan/database/url', this.database.file);
    }
    for (const [port, free] of this.ports) out = out.replace(new RegExp(`\\b${port}\\b`, 'g'), free);
    return out;
  }
}

async function pagePorts(): Promise<Record<string, number>> {
  const ports: Record<string, number> = {};
  for (const port of PORTS) ports[port] = await freePort();
  return ports;
}

/** Signs in on the provider's own pages through the server's metadata, as the extension does; the access token. */
async function signIn(serverUrl: string, login: 'alice' | 'bob'): Promise<string> {
  return (await signInAs(await fetchAuthMetadata(serverUrl), login)).access_token;
}

/** What "Try it on one machine" promises once its blocks run: bob plans on one replica, alice sees it on the other. */
async function tryItWorks(run: PageRun): Promise<void> {
  const replicas = run.processes
    .map((p) => /^ultraplan-server listening on (http:\/\/\S+)$/m.exec(p.stdout())?.[1])
    .filter((url): url is string => url !== undefined);
  assert.equal(replicas.length, 2, 'two replicas');
  const [a, b] = replicas as [string, string];
  const [bob, alice] = await Promise.all([signIn(a, 'bob'), signIn(b, 'alice')]);
  const created = await fetch(`${a}/v1/code/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bob}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      title: 'ultraplan: try it',
      events: [{ payload: setPlanModeEvent('set-mode-1') }, { payload: userMessageEvent('try it') }],
    }),
  });
  assert.equal(created.status, 200, await created.clone().text());
  const id = ((await created.json()) as { session: { id: string } }).session.id;
  // The worker runs the scripted agent: its first words reach the other replica, read by alice.
  await waitFor(
    async () => {
      const events = await fetch(`${b}/v1/code/sessions/${id}/events?sort_order=asc`, { headers: { authorization: `Bearer ${alice}` } });
      assert.equal(events.status, 200, await events.clone().text());
      const { data } = (await events.json()) as { data: { payload: { type: string } }[] };
      return data.some((e) => e.payload.type === 'assistant');
    },
    { message: "the worker's agent to speak in bob's session, read by alice on the other replica", timeoutMs: 20_000 },
  );
}

/** Checks run after a section's blocks, while what they started still runs. */
const AFTER_SECTION: Record<string, (run: PageRun) => Promise<void>> = {
  'docs/team.md#Try it on one machine': tryItWorks,
};

describe("the docs' shell blocks run as written", function () {
  this.timeout(120_000);
  const shared: Partial<Shared> = {};
  let receiverServer: http.Server | undefined;

  before(async () => {
    ensureBundleBuilt('server');
    ensureBundleBuilt('review');
    const received: string[] = [];
    receiverServer = http.createServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(200).end();
    });
    await new Promise<void>((resolve) => receiverServer?.listen(0, '127.0.0.1', resolve));
    const [cluster, provider] = await Promise.all([sharedPostgresCluster(), startOpenidProvider()]);
    Object.assign(shared, {
      cluster,
      provider,
      received,
      receiver: `http://127.0.0.1:${(receiverServer.address() as AddressInfo).port}`,
    });
  });
  after(async () => {
    await shared.provider?.close();
    receiverServer?.closeAllConnections();
    receiverServer?.close();
  });

  it('every shell block is run below or listed as not runnable with why; blocks of our programs are marked sh', () => {
    assert.deepEqual(unaccounted(allBlocks()), []);
  });

  it("every flag of our programs' commands, in blocks run or not, is one their --help names", () => {
    const blocks = accountable(allBlocks()).filter(startsOurPrograms);
    assert.ok(blocks.length >= 8, `found ${blocks.length} blocks`);
    assert.deepEqual(blocks.flatMap(unknownFlags), []);
  });

  for (const file of PAGES) {
    const runnable = accountable(fencedBlocks(file)).filter((b) => startsOurPrograms(b) && !notRunEntry(b));
    if (runnable.length === 0) continue;
    const sections = [...new Set(runnable.map((b) => b.section))];
    describe(file, () => {
      let page: Page | undefined;
      before(async () => {
        page = new Page(shared as Shared, await pagePorts());
      });
      for (const section of sections) {
        const blocks = runnable.filter((b) => b.section === section);
        it(`${section || '(top)'}: ${blocks.length} block(s), lines ${blocks.map((b) => b.line).join(', ')}`, async () => {
          const current = page as Page;
          await current.newSection(blocks);
          let failure: unknown;
          try {
            for (const block of blocks) await current.run.runBlock(block);
            await AFTER_SECTION[`${file}#${section}`]?.(current.run);
          } catch (err) {
            failure = err;
          }
          const stopped = await current.run.stopAll();
          if (failure) throw failure;
          assert.deepEqual(stopped, [], `each program stops cleanly (exit 0) on SIGTERM; these did not:\n${stopped.join('\n')}`);
        });
      }
    });
  }

  describe('a doctored block fails', () => {
    const [top] = fencedBlocks('docs/server.md').filter((b) => b.text.includes('node dist/server.mjs --host 127.0.0.1 --port 8787'));
    let page: Page | undefined;
    before(async () => {
      assert.ok(top, "server.md's first block");
      page = new Page(shared as Shared, await pagePorts());
    });
    afterEach(async () => {
      await page?.run.stopAll();
    });
    const doctored = (from: string, to: string): ShellBlock => {
      assert.ok(top?.text.includes(from), from);
      return { ...(top as ShellBlock), text: (top as ShellBlock).text.replace(from, to) };
    };

    it('as written, it runs (the control)', async () => {
      await (page as Page).run.runBlock(top as ShellBlock);
      assert.equal((page as Page).run.processes.length, 1);
    });
    it('a flag that does not exist', async () => {
      const block = doctored('--token-file', '--token-path');
      await assert.rejects((page as Page).run.runBlock(block), /exited 2[\s\S]*Unknown option '--token-path'/);
      assert.deepEqual(unknownFlags(block), ['docs/server.md:7: --token-path (server)']);
    });
    it('a renamed file', async () => {
      await assert.rejects((page as Page).run.runBlock(doctored('dist/server.mjs', 'dist/server.js')), /exited 1[\s\S]*Cannot find module/);
    });
    it('a wrong path', async () => {
      await assert.rejects(
        (page as Page).run.runBlock(doctored('scripted:examples/demo.json', 'scripted:example/demo.json')),
        /exited 2[\s\S]*example\/demo\.json/,
      );
    });
    it('an output line the program does not print', async () => {
      await assert.rejects(
        (page as Page).run.runBlock(doctored('# ultraplan-server listening on', '# ultraplan-server listens on')),
        /printed .*listening.* but not .*listens on/,
      );
    });
    it('a shell block neither run nor listed, and a listing that names no block', () => {
      const kubectl: ShellBlock = {
        file: 'docs/deploy.md',
        line: 1,
        section: '',
        lang: 'sh',
        text: 'kubectl rollout restart deployment/x',
      };
      const review: ShellBlock = {
        file: 'docs/review.md',
        line: 2,
        section: '',
        lang: '',
        text: 'ultraplan-review --staged --agent acp:gemini',
      };
      assert.deepEqual(unaccounted([kubectl, review], [{ file: 'docs/x.md', contains: 'nothing', why: 'test' }]), [
        'docs/deploy.md:1: a shell block that starts none of our programs and is not in NOT_RUN (with why)',
        'docs/review.md:2: starts our programs: mark it ```sh',
        'NOT_RUN names no block of docs/x.md containing "nothing"',
      ]);
    });
  });
});
