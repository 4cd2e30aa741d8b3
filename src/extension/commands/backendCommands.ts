// Commands that choose where sessions run: Choose Backend (embedded agents, a server, Claude Code on
// the web, Jules) and the keys and tokens they use. Their bodies are a chunk loaded at the first
// run (backendCommandBodies.ts), so the first load stays small.
import { registerCommand, type ExtensionServices } from './services';

const bodies = () => import('./backendCommandBodies');

export function registerBackendCommands(services: ExtensionServices): void {
  const { context, log } = services;
  const register = (id: string, run: (...args: unknown[]) => unknown) => registerCommand(services, id, run);
  register('ultraplan.chooseBackend', async () => (await bodies()).chooseBackend(services));
  register('ultraplan.setJulesApiKey', async () => (await import('../jules/julesKey')).setJulesApiKey(context.secrets, log));
  register('ultraplan.setServerToken', async (named?: unknown): Promise<boolean> => (await bodies()).setServerToken(services, named));
}
