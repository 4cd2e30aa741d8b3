// The window's store of each session's last verification: kept across a reload (a new store on the
// same workspace state), a copy that does not parse dropped, not shown for another plan, bounded,
// and forgotten with the session.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type * as vscode from 'vscode';
import type { PanelVerification } from '../../../src/core/execution/panelVerification';
import { VERIFICATIONS_KEY } from '../../../src/core/stateKeys';
import { MAX_KEPT_VERIFICATIONS, PanelVerifications, type ChangeEmitter } from '../../../src/extension/review/panelVerifications';

class MapMemento {
  readonly values = new Map<string, unknown>();
  keys(): readonly string[] {
    return [...this.values.keys()];
  }
  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    // What a real Memento keeps is JSON: a store that kept something else would not survive a reload.
    this.values.set(key, JSON.parse(JSON.stringify(value)));
  }
}

class Emitter implements ChangeEmitter {
  readonly fired: string[] = [];
  readonly #listeners = new Set<(key: string) => unknown>();
  readonly event: vscode.Event<string> = (listener) => {
    this.#listeners.add(listener);
    return { dispose: () => this.#listeners.delete(listener) };
  };
  fire(key: string): void {
    this.fired.push(key);
    for (const l of this.#listeners) l(key);
  }
  dispose(): void {
    this.#listeners.clear();
  }
}

const planHash = createHash('sha256').update('1. one\n').digest('hex');

function verification(extra: Partial<PanelVerification> = {}): PanelVerification {
  return {
    planHash,
    changes: 'record 0123456789ab · diff 00ff',
    scope: 'the changes since approval',
    at: '2026-12-03T23:50:00.000Z',
    kind: 'verified',
    headline: 'Completed, verified: 0 of 1 step',
    detail: 'verified: 0 done, 0 done differently, 1 missing',
    steps: [
      {
        id: '1',
        title: 'one',
        startLine: 1,
        endLine: 1,
        verdict: 'missing',
        explanation: 'no change does it',
        evidence: [],
        verifiedBy: ['Gemini CLI (ACP) verifier'],
      },
    ],
    outOfPlan: [],
    failures: [],
    ...extra,
  };
}

const log = () => {
  const warnings: string[] = [];
  return { warnings, warn: (m: string) => warnings.push(m) };
};

describe('extension/review/panelVerifications: the verification kept across a reload', () => {
  it('keeps a verification, and a new store on the same workspace state reads it back', async () => {
    const memento = new MapMemento();
    const emitter = new Emitter();
    const store = new PanelVerifications(memento as unknown as vscode.Memento, log(), emitter);
    assert.deepEqual(store.of('embedded:a'), { running: false });
    store.setRunning('embedded:a', true);
    assert.deepEqual(store.of('embedded:a'), { running: true });
    await store.keep('embedded:a', verification());
    store.setRunning('embedded:a', false);
    assert.deepEqual(emitter.fired, ['embedded:a', 'embedded:a', 'embedded:a']);

    const reloaded = new PanelVerifications(memento as unknown as vscode.Memento, log(), new Emitter());
    assert.deepEqual(reloaded.of('embedded:a'), { last: verification(), running: false }, 'running is not kept');
    assert.deepEqual(reloaded.forPlan('embedded:a', planHash), verification());
    assert.equal(reloaded.forPlan('embedded:a', 'e'.repeat(64)), undefined, 'bound to the plan it verified');
  });

  it('drops a saved copy that does not parse, with a warning', () => {
    const memento = new MapMemento();
    memento.values.set(VERIFICATIONS_KEY, { version: 1, sessions: [{ sessionKey: 'embedded:a', verification: { kind: 'passed' } }] });
    const l = log();
    const store = new PanelVerifications(memento as unknown as vscode.Memento, l, new Emitter());
    assert.deepEqual(store.of('embedded:a'), { running: false });
    assert.equal(l.warnings.length, 1);
    assert.match(l.warnings[0]!, /the saved verifications do not parse/);
  });

  it('refuses to keep what a reload could not read back', async () => {
    const store = new PanelVerifications(new MapMemento() as unknown as vscode.Memento, log(), new Emitter());
    await assert.rejects(store.keep('embedded:a', verification({ planHash: 'not a hash' })));
    assert.deepEqual(store.of('embedded:a'), { running: false });
  });

  it('forgets the sessions no longer followed, and keeps at most its bound (the oldest go first)', async () => {
    const memento = new MapMemento();
    const store = new PanelVerifications(memento as unknown as vscode.Memento, log(), new Emitter());
    for (let i = 0; i <= MAX_KEPT_VERIFICATIONS; i++) await store.keep(`embedded:${i}`, verification());
    assert.equal(store.of('embedded:0').last, undefined, 'the oldest went');
    assert.ok(store.of(`embedded:${MAX_KEPT_VERIFICATIONS}`).last);
    await store.retain(new Set(['embedded:7']));
    const reloaded = new PanelVerifications(memento as unknown as vscode.Memento, log(), new Emitter());
    assert.ok(reloaded.of('embedded:7').last);
    assert.equal(reloaded.of('embedded:8').last, undefined);
    assert.equal((memento.get<{ sessions: unknown[] }>(VERIFICATIONS_KEY)?.sessions ?? []).length, 1);
  });
});
