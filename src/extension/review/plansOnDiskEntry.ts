// What activation registers for plans written elsewhere: Review Plan File… and the inbox's "Plans
// on disk" group. Both are chunks loaded after activation (plansOnDisk.ts lists and watches the
// folders, reviewPlanFile.ts reads a plan and starts its session), so the first load stays small.
import { errorMessage } from '../../core/errors';
import { registerCommand, type ExtensionServices } from '../commands/services';
import type { InboxExtraGroup } from '../inbox/inboxView';
import type { PlansOnDisk } from './plansOnDisk';

export const REVIEW_PLAN_FILE_COMMAND = 'ultraplan.reviewPlanFile';

export function registerPlansOnDisk(services: ExtensionServices, inbox: { addGroup(group: InboxExtraGroup): void }): void {
  let plans: Promise<PlansOnDisk> | undefined;
  const load = () =>
    (plans ??= import('./plansOnDisk').then(({ PlansOnDisk, PlansOnDiskRows }) => {
      const found = new PlansOnDisk(services.settings, services.log);
      services.context.subscriptions.push(found);
      inbox.addGroup(new PlansOnDiskRows(found));
      return found;
    }));
  registerCommand(services, REVIEW_PLAN_FILE_COMMAND, async (arg?: unknown) => {
    const [found, { reviewPlanFile }] = await Promise.all([load(), import('./reviewPlanFile')]);
    return reviewPlanFile(services, found, arg);
  });
  // Listed at once, so the inbox shows what is there.
  load().catch((err: unknown) => services.log.error(`plans on disk are not listed: ${errorMessage(err)}`));
}
