// Drives VS Code's workbench UI in code-server the way a person would: the F1 palette, quick
// picks and input boxes, notifications, the status bar, the Output view and webview frames.
// Every wait here is bounded; selectors hold for VS Code 1.100 and 1.139.
import * as path from 'node:path';
import type { Frame, Locator, Page } from 'playwright-core';
import { suiteOf } from './browser';
import { outputDir } from './paths';
import { waitFor } from '../../support/wait';

const QUICK_INPUT = '.quick-input-widget';
const QUICK_INPUT_BOX = '.quick-input-widget .quick-input-box input';
const QUICK_INPUT_ROW = '.quick-input-widget .quick-input-list .monaco-list-row';
const STATUS_BAR_ITEM = '#workbench\\.parts\\.statusbar .statusbar-item';
const TOAST = '.notifications-toasts .notification-toast';
/** A hover the workbench shows in a context view (a quick pick row's description, a tooltip). */
const ROW_HOVER = '.context-view';

export interface TimeoutOption {
  timeoutMs?: number;
}

function exactText(text: string): RegExp {
  return new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
}

/** Closes a quick input left open by an earlier step, so the next one starts clean. */
export async function closeQuickInput(page: Page): Promise<void> {
  const widget = page.locator(QUICK_INPUT);
  if (await widget.isVisible()) {
    await page.keyboard.press('Escape');
    await widget.waitFor({ state: 'hidden', timeout: 5_000 });
  }
}

async function openPalette(page: Page): Promise<Locator> {
  const input = page.locator(QUICK_INPUT_BOX);
  await closeQuickInput(page);
  await page.keyboard.press('F1');
  try {
    await input.waitFor({ state: 'visible', timeout: 3_000 });
  } catch {
    // A webview or terminal may hold the keyboard; give the workbench focus and try again.
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 } });
    await page.keyboard.press('F1');
    await input.waitFor({ state: 'visible', timeout: 5_000 });
  }
  return input;
}

/** A quick-input row whose label is exactly `label`. */
function quickInputRow(page: Page, label: string): Locator {
  return page
    .locator(QUICK_INPUT_ROW)
    .filter({ has: page.locator('.label-name', { hasText: exactText(label) }) })
    .first();
}

/**
 * Runs a command from the F1 palette by its full title, e.g. 'Ultraplan: Show Log'. For one of
 * ours it first waits until Ultraplan's status item shows: the extension has then registered its
 * commands (a slow extension host lists contributions late). While the command is not listed, or
 * the palette closed before it was typed, it opens the palette again and retypes, until `timeoutMs`
 * (60 s) has passed.
 */
export async function runCommand(page: Page, title: string, options: TimeoutOption = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const left = () => Math.max(500, deadline - Date.now());
  if (title.startsWith('Ultraplan: ')) await readStatusBar(page, 'Ultraplan', { timeoutMs: left() });
  for (;;) {
    const input = await openPalette(page);
    const row = quickInputRow(page, title);
    try {
      // The palette closes when something takes the focus as it opens (a panel or an editor
      // coming up): then it is opened again, as a person would press F1 again.
      await input.fill(`>${title}`, { timeout: Math.min(3_000, left()) });
      await row.waitFor({ state: 'visible', timeout: Math.min(3_000, left()) });
      await row.click({ timeout: Math.min(3_000, left()) });
      return;
    } catch (err) {
      if (Date.now() >= deadline) {
        const listed = await page.locator(`${QUICK_INPUT_ROW} .label-name`).allInnerTexts();
        throw new Error(`command "${title}" is not in the palette; it lists: ${JSON.stringify(listed)}`, { cause: err });
      }
      await closeQuickInput(page);
    }
  }
}

/** Picks the item labelled exactly `label` in the open quick pick. */
export async function answerQuickPick(page: Page, label: string, options: TimeoutOption = {}): Promise<void> {
  const row = quickInputRow(page, label);
  try {
    // A long list shows only its first rows: an item below them is found by typing its label, as a person does.
    const shown = await row
      .waitFor({ state: 'visible', timeout: 3_000 })
      .then(() => true)
      .catch(() => false);
    const box = page.locator(QUICK_INPUT_BOX);
    if (!shown && (await box.isVisible())) await box.fill(label);
    // A picker filled from disk or a server is slow with two windows and the unit tests beside it.
    await row.waitFor({ state: 'visible', timeout: options.timeoutMs ?? 30_000 });
  } catch (err) {
    const listed = await page.locator(`${QUICK_INPUT_ROW} .label-name`).allInnerTexts();
    throw new Error(`quick pick has no item "${label}"; it lists: ${JSON.stringify(listed)}`, { cause: err });
  }
  // The pointer may rest on another row, whose hover (its description, shown after a pause) covers
  // this one and stays while the pointer is on it: rest it on the input box above the list (which
  // has no hover) until the hover is gone, then click.
  const box = page.locator(QUICK_INPUT_BOX);
  if (await box.isVisible()) await box.hover({ timeout: 5_000 });
  await page
    .locator(ROW_HOVER)
    .first()
    .waitFor({ state: 'hidden', timeout: 5_000 })
    .catch(() => undefined);
  await row.click();
}

/** What the open quick input shows: its title, placeholder, message (validation or hint) and items. */
export async function readQuickInput(
  page: Page,
  options: TimeoutOption = {},
): Promise<{ title: string; placeholder: string; value: string; message: string; items: string[] }> {
  await page.locator(QUICK_INPUT_BOX).waitFor({ state: 'visible', timeout: options.timeoutMs ?? 10_000 });
  const input = page.locator(QUICK_INPUT_BOX);
  const title = page.locator(`${QUICK_INPUT} .quick-input-title`);
  const message = page.locator(`${QUICK_INPUT} .quick-input-message`);
  return {
    title: (await title.count()) > 0 ? (await title.innerText()).trim() : '',
    placeholder: (await input.getAttribute('placeholder')) ?? '',
    value: await input.inputValue(),
    message: (await message.count()) > 0 ? (await message.innerText()).trim() : '',
    items: (await page.locator(`${QUICK_INPUT_ROW} .label-name`).allInnerTexts()).map((t) => t.trim()),
  };
}

/** Types `text` into the open quick pick's filter, as a person finding an item below the visible rows does; waits for `label` among the rows. */
export async function filterQuickPick(page: Page, text: string, label: string, options: TimeoutOption = {}): Promise<void> {
  await page.locator(QUICK_INPUT_BOX).fill(text);
  try {
    await quickInputRow(page, label).waitFor({ state: 'visible', timeout: options.timeoutMs ?? 10_000 });
  } catch (err) {
    const listed = await page.locator(`${QUICK_INPUT_ROW} .label-name`).allInnerTexts();
    throw new Error(`typing ${JSON.stringify(text)} lists no "${label}"; it lists: ${JSON.stringify(listed)}`, { cause: err });
  }
}

/**
 * Types `text` into the open input box (showInputBox) and presses Enter. With `title`, waits for
 * the box with that title: one box closing while the next opens would otherwise take the answer.
 */
export async function answerInputBox(
  page: Page,
  text: string,
  options: TimeoutOption & { submit?: boolean; title?: string } = {},
): Promise<void> {
  const input = page.locator(QUICK_INPUT_BOX);
  await input.waitFor({ state: 'visible', timeout: options.timeoutMs ?? 10_000 });
  if (options.title)
    await page
      .locator(`${QUICK_INPUT} .quick-input-title`, { hasText: options.title })
      .waitFor({ state: 'visible', timeout: options.timeoutMs ?? 10_000 });
  await input.fill(text);
  if (options.submit ?? true) await input.press('Enter');
}

/**
 * The frame (webviews live two iframes deep) that contains `selector`. Searches every frame of
 * the page until one matches; on timeout, says what each webview showed instead.
 */
export async function findWebviewFrame(page: Page, selector: string, options: TimeoutOption = {}): Promise<Frame> {
  try {
    return await waitFor(
      async () => {
        for (const frame of page.frames()) {
          if (frame === page.mainFrame()) continue;
          try {
            if ((await frame.locator(selector).count()) > 0) return frame;
          } catch {
            // the frame went away while we looked (webview reloads)
          }
        }
        return undefined;
      },
      { timeoutMs: options.timeoutMs ?? 20_000, intervalMs: 200, message: `a webview frame containing ${selector}` },
    );
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    error.message += `\nwebview frames showed: ${await webviewTexts(page)}`;
    throw error;
  }
}

/** The visible text of each webview page (its start), for a failure message. */
async function webviewTexts(page: Page): Promise<string> {
  const shown: string[] = [];
  const isPanelPage = async (frame: Frame) =>
    frame !== page.mainFrame() &&
    (await frame
      .locator('#app')
      .count()
      .catch(() => 0)) > 0;
  for (const frame of page.frames()) {
    if (!(await isPanelPage(frame))) continue;
    const text = await frame
      .locator('body')
      .innerText({ timeout: 2_000 })
      .catch((err: unknown) => `(unreadable: ${String(err).split('\n')[0]})`);
    shown.push(JSON.stringify(text.replace(/\s+/g, ' ').slice(0, 400)));
  }
  return shown.length > 0 ? shown.join(' | ') : 'no webview page';
}

/** Saves test-output/e2e/<suite>/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const file = path.join(outputDir(suiteOf(page)), `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** The status bar item whose text contains `text` (click it, hover it). */
export function statusBarItem(page: Page, text: string): Locator {
  return page.locator(STATUS_BAR_ITEM).filter({ hasText: text }).first();
}

/** The texts of every status bar item, left to right. */
export async function statusBarTexts(page: Page): Promise<string[]> {
  return (await page.locator(STATUS_BAR_ITEM).allInnerTexts()).map((t) => t.trim()).filter((t) => t.length > 0);
}

/** Waits until a status bar item contains `text` and returns its whole text. */
export async function readStatusBar(page: Page, text: string, options: TimeoutOption = {}): Promise<string> {
  const item = statusBarItem(page, text);
  try {
    await item.waitFor({ state: 'visible', timeout: options.timeoutMs ?? 20_000 });
  } catch (err) {
    throw new Error(`no status bar item contains "${text}"; items: ${JSON.stringify(await statusBarTexts(page))}`, { cause: err });
  }
  return (await item.innerText()).trim();
}

/** The status bar item's accessible label (VS Code puts the tooltip in a hover, not a title). */
export async function statusBarAriaLabel(page: Page, text: string): Promise<string> {
  const label = statusBarItem(page, text).locator('[aria-label]').first();
  return (await label.getAttribute('aria-label')) ?? '';
}

/** The messages of the notification toasts now showing. */
export async function notifications(page: Page): Promise<string[]> {
  return (await page.locator(`${TOAST} .notification-list-item-message`).allInnerTexts()).map((t) => t.trim());
}

/** Waits for a notification containing `text`; returns its toast (to read or click its buttons). */
export async function waitForNotification(page: Page, text: string, options: TimeoutOption = {}): Promise<Locator> {
  const toast = page.locator(TOAST).filter({ hasText: text }).first();
  try {
    await toast.waitFor({ state: 'visible', timeout: options.timeoutMs ?? 20_000 });
  } catch (err) {
    throw new Error(`no notification contains "${text}"; showing: ${JSON.stringify(await notifications(page))}`, { cause: err });
  }
  return toast;
}

/** Clicks the button labelled `button` on the notification containing `text`. */
export async function clickNotificationButton(page: Page, text: string, button: string, options: TimeoutOption = {}): Promise<void> {
  const toast = await waitForNotification(page, text, options);
  await toast
    .locator('.monaco-button', { hasText: exactText(button) })
    .first()
    .click();
}

/**
 * Every notification the window raised so far: the notification center keeps the ones whose toast
 * has gone. Opened from the palette and closed with its own Hide button, as a person would (1.139
 * no longer lists "Notifications: Hide Notifications" in the palette).
 */
export async function notificationCenterMessages(page: Page): Promise<string[]> {
  await runCommand(page, 'Notifications: Show Notifications');
  const center = page.locator('.notifications-center');
  await center.waitFor({ state: 'visible', timeout: 10_000 });
  const texts = (await center.locator('.notification-list-item-message').allInnerTexts()).map((t) => t.trim());
  await center.locator('.action-label[aria-label^="Hide Notifications"]').first().click();
  await center.waitFor({ state: 'hidden', timeout: 5_000 });
  return texts;
}

/** Clears every notification, so toasts do not cover the status bar or the panel. */
export async function dismissNotifications(page: Page): Promise<void> {
  if ((await page.locator(TOAST).count()) === 0) return;
  await runCommand(page, 'Notifications: Clear All Notifications');
  await page.locator(TOAST).first().waitFor({ state: 'hidden', timeout: 5_000 });
}

/** The name of the channel the Output view shows, or '' when the Output view is not open. */
export async function activeOutputChannel(page: Page): Promise<string> {
  const select = page.locator('#workbench\\.parts\\.panel .monaco-select-box').first();
  if (!(await select.isVisible())) return '';
  return select.evaluate((el) => {
    const s = el as HTMLSelectElement;
    return s.options[s.selectedIndex]?.text ?? '';
  });
}

/** Waits until the Output view shows the channel `name`. */
export async function waitForOutputChannel(page: Page, name: string, options: TimeoutOption = {}): Promise<void> {
  let last = '';
  try {
    await waitFor(
      async () => {
        last = await activeOutputChannel(page);
        return last === name;
      },
      { timeoutMs: options.timeoutMs ?? 15_000, intervalMs: 200, message: `the Output view to show "${name}"` },
    );
  } catch (err) {
    throw new Error(`the Output view shows "${last}", not "${name}"`, { cause: err });
  }
}

/** The text lines the Output view shows now (the visible part of its editor). */
export async function outputViewText(page: Page): Promise<string> {
  const lines = page.locator('#workbench\\.parts\\.panel .view-lines .view-line');
  return (await lines.allInnerTexts()).join('\n').replace(/\u00a0/g, ' ');
}
