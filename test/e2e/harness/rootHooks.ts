// Mocha root hooks of the e2e runs (test/e2e/.mocharc.json requires this file).
import { closeSharedBrowser } from './browser';

export const mochaHooks = {
  /**
   * The windows' shared Chromium would keep a serial run's process alive after its last test. A
   * parallel worker runs each file under a root of its own, so there this would close the browser
   * after every file; the worker's exit closes it instead (Playwright kills what it launched).
   */
  async afterAll(): Promise<void> {
    if (process.env.MOCHA_WORKER_ID === undefined) await closeSharedBrowser();
  },
};
