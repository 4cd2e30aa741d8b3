// A session's title: the first line of its prompt, clipped. Pure.
const MAX_TITLE = 80;

export function titleFromPrompt(prompt: string): string {
  const line =
    prompt
      .split(/\r?\n/)
      .find((l) => l.trim().length > 0)
      ?.trim() ?? 'plan';
  return line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 1)}…` : line;
}
