// The bounds on an agent's answers and the words of its errors.

/** An agent did not answer within its bound. */
export class TimeoutError extends Error {}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** What a JSON-RPC error's `data` says: agents put the cause there ("Internal error" alone says nothing). */
function errorDetail(data: unknown): string {
  if (typeof data === 'string') return data;
  if (!data || typeof data !== 'object') return '';
  const record = data as Record<string, unknown>;
  for (const key of ['message', 'details', 'detail', 'error']) {
    if (typeof record[key] === 'string' && record[key]) return (record[key] as string).trim();
  }
  return '';
}

export function agentErrorMessage(error: unknown): string {
  if (error instanceof Error) {
    const detail = errorDetail((error as { data?: unknown }).data);
    if (!detail || error.message.includes(detail)) return error.message;
    // The cause instead of a bare "Internal error".
    return /^internal error$/i.test(error.message.trim()) ? detail : `${error.message} (${detail})`;
  }
  if (error && typeof error === 'object' && 'message' in error) return String((error as { message: unknown }).message);
  return String(error);
}
