// Wires the webhook notifier to the team server's sessions: the PostgreSQL outbox (each event
// claimed by one replica) feeds the notifier's bounded queues.
import type { QuorumPolicy } from '../identity/quorum';
import { NotificationOutbox } from '../store/postgres/notificationOutbox';
import { PostgresServerStore } from '../store/postgres/postgresStore';
import type { ServerStore } from '../store/serverStore';
import { sessionLink, type NotifySettings } from './notifyOptions';

export async function startNotifications(
  store: ServerStore,
  notify: NotifySettings,
  quorum: QuorumPolicy,
  listening: string,
  log: (line: string) => void,
): Promise<{ close(): Promise<void> }> {
  if (!(store instanceof PostgresServerStore)) throw new Error('notifications need the PostgreSQL store');
  const base = notify.linkBase ?? listening;
  const outbox = new NotificationOutbox({
    pool: store.pool,
    quorum,
    linkFor: (id) => sessionLink(base, id),
    deliver: (event) => notify.notifier.notify(event),
    log,
  });
  await outbox.start();
  return {
    async close() {
      await outbox.close();
      // What is queued gets a moment to go out; then in-flight posts are aborted.
      await Promise.race([notify.notifier.idle(), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      notify.notifier.close();
    },
  };
}
