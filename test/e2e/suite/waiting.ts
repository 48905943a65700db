// Helpers the e2e suites share (not a suite: the runner loads *.e2e.test.js only).
import type * as vscode from 'vscode';

/** Calls `probe` until `done` accepts its value or `timeoutMs` passes; returns the last value. */
export async function poll<T>(probe: () => T | PromiseLike<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The Markdown of the hovers a hover provider returned, joined. */
export function hoverMarkdown(hovers: vscode.Hover[] | undefined): string {
  return (hovers ?? []).flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n---\n');
}
