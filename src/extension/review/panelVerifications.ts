// Each followed session's last verification against its approved plan, kept in workspace state
// beside the sessions themselves so it survives a reload, and whether one runs now (not kept). A
// verification names the plan hash and the changes it read; the surfaces show it only while that
// plan is the session's approved one. What a reload reads back is parsed, and a copy that does not
// parse is dropped with a warning, never shown.
import type * as vscode from 'vscode';
import * as z from 'zod';
import { Disposable } from '../../core/lifecycle';
import { PanelVerificationSchema, type PanelVerification, type SessionVerification } from '../../core/execution/panelVerification';
import { VERIFICATIONS_KEY } from '../../core/stateKeys';

/** More sessions than the window follows at once; the oldest verification goes first. */
export const MAX_KEPT_VERIFICATIONS = 200;

const StoredSchema = z.strictObject({
  version: z.literal(1),
  sessions: z
    .array(z.strictObject({ sessionKey: z.string().min(1).max(256), verification: PanelVerificationSchema }))
    .max(MAX_KEPT_VERIFICATIONS),
});

export interface VerificationsLog {
  warn(message: string): void;
}

/** The emitter the store fires; vscode.EventEmitter in the extension, a plain one in tests. */
export interface ChangeEmitter {
  readonly event: vscode.Event<string>;
  fire(sessionKey: string): void;
  dispose(): void;
}

export class PanelVerifications extends Disposable {
  readonly #kept = new Map<string, PanelVerification>();
  readonly #running = new Set<string>();
  readonly #changed: ChangeEmitter;
  /** Hears the session key whose verification changed. */
  readonly onDidChange: vscode.Event<string>;

  constructor(
    private readonly state: vscode.Memento,
    log: VerificationsLog,
    emitter: ChangeEmitter,
  ) {
    super();
    this.#changed = this._register(emitter);
    this.onDidChange = emitter.event;
    const raw = state.get<unknown>(VERIFICATIONS_KEY);
    if (raw === undefined) return;
    const parsed = StoredSchema.safeParse(raw);
    if (!parsed.success) {
      log.warn(`the saved verifications do not parse (${z.prettifyError(parsed.error).slice(0, 300)}); starting without them`);
      return;
    }
    for (const { sessionKey, verification } of parsed.data.sessions) this.#kept.set(sessionKey, verification);
  }

  /** What the panel shows of a session: its last verification (any plan: the reader checks the hash) and whether one runs. */
  of(sessionKey: string): SessionVerification {
    const last = this.#kept.get(sessionKey);
    return { ...(last ? { last } : {}), running: this.#running.has(sessionKey) };
  }

  /** The last verification of the plan whose hash is given, if that is the one kept. */
  forPlan(sessionKey: string, planHash: string | undefined): PanelVerification | undefined {
    const last = this.#kept.get(sessionKey);
    return last && last.planHash === planHash ? last : undefined;
  }

  running(sessionKey: string): boolean {
    return this.#running.has(sessionKey);
  }

  setRunning(sessionKey: string, running: boolean): void {
    if (running === this.#running.has(sessionKey)) return;
    if (running) this.#running.add(sessionKey);
    else this.#running.delete(sessionKey);
    this.#changed.fire(sessionKey);
  }

  /** Keeps a finished verification (parsed: what is kept is what a reload can read back). */
  async keep(sessionKey: string, verification: PanelVerification): Promise<void> {
    const checked = PanelVerificationSchema.parse(verification);
    this.#kept.delete(sessionKey);
    this.#kept.set(sessionKey, checked);
    while (this.#kept.size > MAX_KEPT_VERIFICATIONS) this.#kept.delete(this.#kept.keys().next().value!);
    this.#changed.fire(sessionKey);
    await this.#save();
  }

  /** Drops the verifications of sessions the window no longer follows (Clear History, Forget). */
  async retain(followed: ReadonlySet<string>): Promise<void> {
    const gone = [...this.#kept.keys()].filter((key) => !followed.has(key));
    if (!gone.length) return;
    for (const key of gone) this.#kept.delete(key);
    await this.#save();
  }

  async #save(): Promise<void> {
    const value: z.infer<typeof StoredSchema> = {
      version: 1,
      sessions: [...this.#kept].map(([sessionKey, verification]) => ({ sessionKey, verification })),
    };
    await this.state.update(VERIFICATIONS_KEY, value);
  }
}
