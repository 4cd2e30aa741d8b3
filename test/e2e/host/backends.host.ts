// In-host: Backends against the real VS Code API with a stand-in secret store and a temporary
// storage folder: one HTTP backend per server URL, a restored session on its own URL, the token
// only from secret storage, and the embedded host running the shipped scripted demo.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Backends, scriptedAgentSource, serverTokenKey } from '../../../src/extension/backends/backends';
import { SETTING_DEFAULTS } from '../../../src/extension/settings/settingsSchema';

const EXTENSION_ID = 'ultraplan.ultraplan';

/** The extension's globalState, in memory. */
class Memory implements vscode.Memento {
  readonly #values = new Map<string, unknown>();
  keys(): readonly string[] {
    return [...this.#values.keys()];
  }
  get<T>(key: string, fallback?: T): T | undefined {
    return this.#values.has(key) ? (this.#values.get(key) as T) : fallback;
  }
  async update(key: string, value: unknown): Promise<void> {
    this.#values.set(key, value);
  }
  setKeysForSync(): void {}
}

class Secrets implements vscode.SecretStorage {
  readonly #values = new Map<string, string>();
  readonly #changed = new vscode.EventEmitter<vscode.SecretStorageChangeEvent>();
  readonly onDidChange = this.#changed.event;
  async get(key: string): Promise<string | undefined> {
    return this.#values.get(key);
  }
  async store(key: string, value: string): Promise<void> {
    this.#values.set(key, value);
  }
  async delete(key: string): Promise<void> {
    this.#values.delete(key);
  }
  async keys(): Promise<string[]> {
    return [...this.#values.keys()];
  }
}

describe('Backends (real VS Code API)', function () {
  this.timeout(60_000);
  let dir = '';
  let backends: Backends | undefined;
  let log: vscode.LogOutputChannel;
  const secrets = new Secrets();

  before(() => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not installed`);
    dir = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-backends-host-'));
    log = vscode.window.createOutputChannel('Ultraplan backends (test)', { log: true });
    backends = new Backends({
      context: { secrets, globalState: new Memory() },
      log,
      embeddedAgent: scriptedAgentSource(extension.extensionUri),
      service: { serverScript: path.join(extension.extensionPath, 'dist', 'server.mjs'), version: 'backends-host' },
    });
  });
  after(async () => {
    await backends?.dispose();
    log.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one HTTP backend per server URL; a restored session keeps its own URL', async () => {
    const settings = { ...SETTING_DEFAULTS, backend: 'server' as const, 'server.url': 'http://127.0.0.1:8787' };
    const first = await backends!.forNewSession(settings);
    const second = await backends!.forNewSession(settings);
    assert.equal(first.backend, second.backend, 'the same backend for the same URL');
    assert.equal(first.serverUrl, 'http://127.0.0.1:8787');
    assert.equal(first.demo, false);
    const restored = await backends!.forRestored('server', settings, 'http://127.0.0.1:9999');
    assert.notEqual(restored, first.backend, "a stored session is not re-pointed by today's setting");
    await assert.rejects(backends!.forRestored('server', settings, undefined), /no server address/);
  });

  it('the token comes from secret storage only', async () => {
    assert.equal(await backends!.hasServerToken('http://127.0.0.1:8787/x'), false);
    await secrets.store(serverTokenKey('http://127.0.0.1:8787'), 'tok');
    assert.equal(await backends!.hasServerToken('http://127.0.0.1:8787/other/path'), true, 'keyed by origin');
  });

  it('the embedded backend runs the shipped scripted demo, labelled as a demo', async () => {
    const created = await backends!.forNewSession({ ...SETTING_DEFAULTS, backend: 'embedded', 'agent.choice': 'demo' });
    assert.equal(created.backend.kind, 'embedded');
    assert.equal(created.demo, true);
    assert.equal(created.agentLabel, 'Demo (scripted)');
    const again = await backends!.forRestored('embedded', SETTING_DEFAULTS, undefined);
    assert.equal(again.kind, 'embedded');
  });
});
