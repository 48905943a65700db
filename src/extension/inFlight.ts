/**
 * Promises still running, one per key, each tagged with what it was started for: a caller asking
 * for the same key and tag joins the running one instead of starting the same work again.
 * (The status bar, the CodeLens and a first hover all ask for a file's estimate as it opens.)
 */
export class InFlight<T> {
  private readonly running = new Map<string, { readonly tag: string; readonly promise: Promise<T> }>();

  /** The running promise for `key` and `tag`, else the one `start` returns, remembered until it settles. */
  join(key: string, tag: string, start: () => Promise<T>): Promise<T> {
    const current = this.running.get(key);
    if (current && current.tag === tag) return current.promise;
    const promise = start().finally(() => {
      if (this.running.get(key)?.promise === promise) this.running.delete(key);
    });
    this.running.set(key, { tag, promise });
    return promise;
  }

  forget(key: string): void {
    this.running.delete(key);
  }

  clear(): void {
    this.running.clear();
  }
}
