import * as assert from 'node:assert/strict';
import { InFlight } from '../../../src/extension/inFlight';

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(error: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('InFlight', () => {
  it('joins a caller asking for the same key and tag to the running promise', async () => {
    const flights = new InFlight<number>();
    const work = deferred<number>();
    let started = 0;
    const start = () => (started++, work.promise);
    const first = flights.join('file.py', 'v1', start);
    const second = flights.join('file.py', 'v1', start);
    assert.equal(second, first);
    work.resolve(7);
    assert.equal(await second, 7);
    assert.equal(started, 1);
  });

  it('starts again for another tag (a new document version) and once the first has settled', async () => {
    const flights = new InFlight<string>();
    let started = 0;
    const start = (value: string) => () => (started++, Promise.resolve(value));
    await flights.join('file.py', 'v1', start('a'));
    assert.equal(await flights.join('file.py', 'v1', start('b')), 'b');
    const v2 = flights.join('file.py', 'v2', start('c'));
    const v3 = flights.join('file.py', 'v3', start('d'));
    assert.deepEqual(await Promise.all([v2, v3]), ['c', 'd']);
    assert.equal(started, 4);
  });

  it('forgets a failed run, so the next caller tries again', async () => {
    const flights = new InFlight<number>();
    await assert.rejects(flights.join('file.py', 'v1', () => Promise.reject(new Error('parser failed'))), /parser failed/);
    assert.equal(await flights.join('file.py', 'v1', () => Promise.resolve(1)), 1);
  });

  it('a later start for the same key is not dropped when an earlier one settles', async () => {
    const flights = new InFlight<number>();
    const old = deferred<number>();
    const next = deferred<number>();
    void flights.join('file.py', 'v1', () => old.promise);
    const current = flights.join('file.py', 'v2', () => next.promise);
    old.resolve(1);
    await old.promise;
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(flights.join('file.py', 'v2', () => Promise.resolve(99)), current);
    next.resolve(2);
    assert.equal(await current, 2);
  });
});
