import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { InputError, MAX_FILE_BYTES, readPythonSource } from '../../../src/cli/readSource';

/** Resolves to the error readPythonSource rejects with, or fails the test if it resolves or takes long. */
async function refusal(file: string, maxBytes?: number): Promise<InputError> {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${file}: still reading after 2 s`)), 2_000).unref());
  const error = await Promise.race([readPythonSource(file, maxBytes).then(() => undefined, (e: unknown) => e), timeout]);
  assert.ok(error instanceof InputError, `expected an InputError, got ${String(error)}`);
  assert.ok(!error.message.includes('\n'), error.message);
  return error;
}

describe('readPythonSource', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'gpu-estimate-read-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));
  const at = (name: string) => path.join(scratch, name);

  it('reads a regular file, and one through a symlink', async () => {
    writeFileSync(at('train.py'), 'import torch\n');
    symlinkSync(at('train.py'), at('link.py'));
    assert.equal(await readPythonSource(at('train.py')), 'import torch\n');
    assert.equal(await readPythonSource(at('link.py')), 'import torch\n');
  });

  it('refuses a symlink to /dev/zero at once, without reading it', async () => {
    symlinkSync('/dev/zero', at('zero.py'));
    assert.match((await refusal(at('zero.py'))).message, /zero\.py is a character device, not a regular file/);
  });

  it('refuses a FIFO without waiting for a writer', async () => {
    execFileSync('mkfifo', [at('pipe.py')]);
    assert.match((await refusal(at('pipe.py'))).message, /pipe\.py is a FIFO \(named pipe\), not a regular file/);
  });

  it('refuses a file larger than the cap from its size, before reading it', async () => {
    // Sparse: the size says 1 byte past the cap, but no data is written (or read).
    writeFileSync(at('huge.py'), '');
    truncateSync(at('huge.py'), MAX_FILE_BYTES + 1);
    assert.match((await refusal(at('huge.py'))).message, /huge\.py is 32\.0 MiB, more than the 32\.0 MiB read of a script; not read/);
  });

  it('stops at the cap when a file has more than its size said (a /proc file says 0)', async () => {
    symlinkSync('/proc/self/maps', at('maps.py'));
    assert.match((await refusal(at('maps.py'), 100)).message, /maps\.py grew past 100 bytes while being read/);
  });

  it('reads a file exactly at the cap', async () => {
    writeFileSync(at('exact.py'), 'x = 1\n'.repeat(10));
    assert.equal((await readPythonSource(at('exact.py'), 60)).length, 60);
    assert.match((await refusal(at('exact.py'), 59)).message, /exact\.py is 60 bytes, more than the 59 bytes read of a script/);
  });
});
