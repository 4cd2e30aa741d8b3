// The host's half of wire -> paint: event pages as the wire sends them (JSON text) -> the client's
// checks -> the one parse -> scanner and session model -> what each surface reads -> the panel
// state posted to the webview. Two variants in the same run, median of 5:
//  - before: the path as it was: a zod pass per item envelope and another per payload before the
//    batch parse, and per change every surface deriving the revisions again (3N+2 times for N
//    followed sessions; N = 3 here) and the whole panel state parsed and posted;
//  - ours: envelopes and routing by hand (core/codeSessions.ts), the batch parse the only schema
//    pass, one snapshot per change, and the panel state parsed and posted only when it differs.
// Reported: time per 1,000 events, schema passes per event (every schema of the wire's modules
// counted; each is a zod object parse, so it is also a copy of what it checks), panel posts and
// revision derivations per session replay. Both variants run today's session model, so "before"
// also pays for the one snapshot per change it makes now: its time is a slight overestimate.
import * as z from 'zod';
import * as codeSessions from '../src/core/codeSessions';
import { readEventItem, sortEventItems } from '../src/core/codeSessions';
import { parseEventBatch } from '../src/core/eventBatch';
import { parsePanelState, type PanelState } from '../src/core/panelMessages';
import * as protocol from '../src/core/protocol';
import { AnyEventSchema, SKIPPED_EVENT_TYPES } from '../src/core/protocol';
import { SessionModel } from '../src/core/sessionModel';
import { PlanHashes, projectRevisions, samePanelState } from '../src/core/sessionProjection';
import type { SessionIdentity } from '../src/core/sessionState';
import { countSchemaPasses } from '../test/support/schemaPasses';
import { repeat, result, type BenchResult } from './measure';

export const title = 'Wire -> host (the panel post): 20,000 events in pages of 100, ten plan revisions, before vs ours';

const EVENTS = 20_000;
const PAGE = 100;
const REVISION_EVERY = 2_000;
const RUNS = 5;
/** Followed sessions the surfaces read on each change in the "before" variant. */
const SESSIONS = 3;

const identity: SessionIdentity = {
  key: 'server:bench',
  sessionId: 'bench',
  title: 'bench',
  createdAt: 0,
  backendKind: 'server',
  backendLabel: 'Server',
  demo: false,
};

/** The item envelope's schema as the client used to check every item with it. */
const OldItemSchema = z.looseObject({
  sequence_num: z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]),
  payload: z.unknown(),
});

function plan(n: number): string {
  return [
    `# Plan, revision ${n}`,
    '',
    ...Array.from({ length: 60 }, (_, i) => `${i + 1}. Change file ${i}.ts so that it does step ${i}.`),
  ].join('\n');
}

/** The session as wire pages (JSON text): tool calls and results, and a plan every 2,000 events, rejected until the last. */
function pages(): string[] {
  const events: unknown[] = [];
  let revision = 0;
  let nextPlanAt = REVISION_EVERY;
  while (events.length < EVENTS) {
    const i = events.length;
    if (i >= nextPlanAt) {
      nextPlanAt += REVISION_EVERY;
      revision++;
      const id = `toolu_plan_${revision}`;
      const text = plan(revision);
      events.push({
        type: 'assistant',
        message: { role: 'assistant', content: [{ type: 'tool_use', id, name: 'ExitPlanMode', input: { plan: text } }] },
      });
      events.push({
        type: 'control_request',
        request_id: `req_${revision}`,
        request: { subtype: 'can_use_tool', tool_name: 'ExitPlanMode', tool_use_id: id, input: { plan: text } },
      });
      events.push({
        type: 'user',
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'Make it smaller.', is_error: true }] },
      });
      continue;
    }
    const id = `read_${i}`;
    events.push({
      type: 'assistant',
      uuid: `u${i}`,
      message: { role: 'assistant', content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: `/w/${i}.ts` } }] },
    });
    events.push({
      type: 'user',
      uuid: `v${i}`,
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'x'.repeat(400) }] },
    });
  }
  const out: string[] = [];
  for (let p = 0; p < events.length; p += PAGE) {
    const data = events.slice(p, p + PAGE).map((payload, k) => ({ sequence_num: p + k + 1, payload }));
    out.push(JSON.stringify({ data, next_cursor: p + PAGE < events.length ? String(p + PAGE) : null }));
  }
  return out;
}

interface Run {
  ms: number;
  passes: number;
  events: number;
  posts: number;
  derivations: number;
}

/** Counts every schema pass of the wire's modules (and the old envelope schema) while `work` runs. */
function counted(work: () => Omit<Run, 'passes'>): Run {
  const passes = countSchemaPasses([protocol, codeSessions, { OldItemSchema }]);
  try {
    return { ...work(), passes: passes.n };
  } finally {
    passes.restore();
  }
}

function replay(bodies: readonly string[], variant: 'before' | 'ours'): Omit<Run, 'passes'> {
  const started = performance.now();
  let posts = 0;
  let derivations = 0;
  let events = 0;
  let shown: PanelState | undefined;
  const oldHashes = new PlanHashes();
  const model = new SessionModel({
    identity,
    initialPhase: 'planning',
    cursor: null,
    at: 0,
    onSnapshot: (snapshot) => {
      if (variant === 'ours') {
        // The surfaces read the snapshot; the panel is posted only when its part differs.
        if (shown && samePanelState(shown, snapshot.panel)) return;
        shown = snapshot.panel;
      } else {
        // Each surface derived the revisions again, then the whole panel state was parsed and posted.
        for (let i = 0; i < 3 * SESSIONS + 2; i++) {
          projectRevisions(snapshot.state, snapshot.state.notes, [], oldHashes);
          derivations++;
        }
      }
      if (!parsePanelState(snapshot.panel).ok) throw new Error('invalid panel state');
      posts++;
    },
  });
  let cursor: string | null = null;
  for (const text of bodies) {
    const page = codeSessions.CodeEventPageSchema.parse(JSON.parse(text));
    const payloads: unknown[] = [];
    for (const raw of page.data) {
      if (variant === 'ours') {
        const item = readEventItem(raw);
        if (!item) continue;
        cursor = item.sequence;
        payloads.push(item.payload);
      } else {
        const item = OldItemSchema.safeParse(raw);
        if (!item.success) continue;
        cursor = String(item.data.sequence_num);
        payloads.push(item.data.payload);
      }
    }
    let kept: unknown[];
    if (variant === 'ours') kept = sortEventItems(payloads).events;
    else {
      kept = [];
      for (const p of payloads) {
        const parsed = AnyEventSchema.safeParse(p);
        if (parsed.success && !SKIPPED_EVENT_TYPES.has(parsed.data.type)) kept.push(p);
      }
    }
    events += kept.length;
    const batch = parseEventBatch(kept);
    model.scanner.ingestParsed(batch);
    model.reduce({ type: 'poll', poll: { batch, status: undefined, cursor }, at: events });
  }
  if (variant === 'ours') derivations = model.revisionsDerived;
  return { ms: performance.now() - started, events, posts, derivations };
}

export async function run(): Promise<BenchResult[]> {
  const bodies = pages();
  const runs: Record<'before' | 'ours', Run[]> = { before: [], ours: [] };
  // Interleaved, so the machine's drift touches both alike; one unrecorded warm-up each.
  replay(bodies, 'before');
  replay(bodies, 'ours');
  await repeat(RUNS, () => {
    runs.before.push(counted(() => replay(bodies, 'before')));
    runs.ours.push(counted(() => replay(bodies, 'ours')));
    return 0;
  });
  const perK = (r: Run) => (r.ms / r.events) * 1000;
  const perEvent = (r: Run) => r.passes / r.events;
  const events = runs.ours[0]!.events;
  return [
    result('wire -> panel post: before', 'ms/1k events', 'lower', runs.before.map(perK), { note: `${events} events, pages of ${PAGE}` }),
    result('wire -> panel post: ours', 'ms/1k events', 'lower', runs.ours.map(perK), { baseline: 'wire -> panel post: before' }),
    result('schema passes per event: before', 'passes', 'lower', runs.before.map(perEvent), {
      note: 'item envelope + payload + the batch parse, and the page envelope',
    }),
    result('schema passes per event: ours', 'passes', 'lower', runs.ours.map(perEvent), {
      baseline: 'schema passes per event: before',
      note: 'the batch parse (results, requests, ExitPlanMode calls) and the page envelope',
    }),
    result(
      'panel posts per replay: before',
      'posts',
      'lower',
      runs.before.map((r) => r.posts),
    ),
    result(
      'panel posts per replay: ours',
      'posts',
      'lower',
      runs.ours.map((r) => r.posts),
      { baseline: 'panel posts per replay: before' },
    ),
    result(
      'revision derivations per replay: before',
      'derivations',
      'lower',
      runs.before.map((r) => r.derivations),
      {
        note: `3N+2 per change, N = ${SESSIONS} sessions`,
      },
    ),
    result(
      'revision derivations per replay: ours',
      'derivations',
      'lower',
      runs.ours.map((r) => r.derivations),
      {
        baseline: 'revision derivations per replay: before',
      },
    ),
  ];
}
