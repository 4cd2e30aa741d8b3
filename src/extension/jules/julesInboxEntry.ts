// The inbox's Jules group exists while a Jules key is set: added when one is stored, listed again
// with a new key, removed with the key. This module only watches the key; the group and the
// listing are a chunk loaded once a key is set (julesInboxGroup.ts), so a window with no key
// loads neither.
import { errorMessage } from '../../core/errors';
import type { IDisposable } from '../../core/lifecycle';
import type { ExtensionServices } from '../commands/services';
import type { InboxExtraGroup } from '../inbox/inboxView';
import { JULES_KEY_SECRET } from './julesKey';
import type { JulesInboxGroup } from './julesInboxGroup';

export function registerJulesInbox(
  services: ExtensionServices,
  inbox: { addGroup(group: InboxExtraGroup, first?: boolean): IDisposable },
): IDisposable {
  const { context, sessions, log } = services;
  let shown: { group: JulesInboxGroup; removal: IDisposable } | undefined;
  let checking = Promise.resolve();
  const check = async (keyChanged: boolean): Promise<void> => {
    const hasKey = Boolean(await context.secrets.get(JULES_KEY_SECRET));
    if (!hasKey) {
      shown?.removal.dispose();
      shown?.group.dispose();
      shown = undefined;
      return;
    }
    if (shown) {
      if (keyChanged) await shown.group.refresh();
      return;
    }
    const { JulesInboxGroup } = await import('./julesInboxGroup');
    const group = new JulesInboxGroup(context.secrets, () => services.settings.read()['jules.baseUrl'], sessions, log);
    // Before "Plans on disk": sessions come before files.
    shown = { group, removal: inbox.addGroup(group, true) };
  };
  // One check at a time, in order: a key stored and removed quickly ends with no group.
  const queue = (keyChanged: boolean) => {
    checking = checking.then(() => check(keyChanged)).catch((err: unknown) => log.error(`the inbox's Jules group: ${errorMessage(err)}`));
  };
  const watching = context.secrets.onDidChange((e) => {
    if (e.key === JULES_KEY_SECRET) queue(true);
  });
  queue(false);
  return {
    dispose: () => {
      watching.dispose();
      shown?.removal.dispose();
      shown?.group.dispose();
      shown = undefined;
    },
  };
}
