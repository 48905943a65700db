import { constants, promises as fs, type Stats } from 'node:fs';
import * as path from 'node:path';

export class InputError extends Error {}

const PYTHON_EXTENSIONS = new Set(['.py', '.pyw', '.pyi']);

/** Far above any training script (the analysis itself stops at MAX_SOURCE_CHARS); what is larger is not read. */
export const MAX_FILE_BYTES = 32 * 1024 * 1024;

const READ_CHUNK_BYTES = 1 << 20;

/**
 * Reads a Python source file, refusing what is not one with a message a user can act on. Only a
 * regular file is read (a symlink counts as what it points to), and never more than `maxBytes`.
 */
export async function readPythonSource(file: string, maxBytes = MAX_FILE_BYTES): Promise<string> {
  if (!PYTHON_EXTENSIONS.has(path.extname(file).toLowerCase())) {
    throw new InputError(`${file} is not a Python file (expected a .py file)`);
  }
  // Checked before opening: opening a FIFO for reading waits for a writer, and a device never ends.
  checkReadable(file, await fs.stat(file).catch(cannotRead(file)), maxBytes);
  // O_NONBLOCK: should the path become a FIFO after the check, opening it still returns at once.
  const handle = await fs.open(file, constants.O_RDONLY | constants.O_NONBLOCK).catch(cannotRead(file));
  let bytes: Buffer;
  try {
    checkReadable(file, await handle.stat(), maxBytes);
    bytes = await readAtMost(handle, maxBytes).catch(cannotRead(file));
  } finally {
    await handle.close();
  }
  if (bytes.length > maxBytes) throw new InputError(`${file} grew past ${describeBytes(maxBytes)} while being read; not read`);
  if (bytes.subarray(0, 8192).includes(0)) throw new InputError(`${file} is a binary file, not Python source`);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (text.includes('\uFFFD') && !bytes.includes(Buffer.from('\uFFFD'))) {
    throw new InputError(`${file} is not UTF-8 text`);
  }
  return text;
}

function cannotRead(file: string): (error: unknown) => never {
  return (error) => {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError(code === 'ENOENT' ? `${file}: no such file` : `${file}: cannot read (${code ?? String(error)})`);
  };
}

function checkReadable(file: string, stat: Stats, maxBytes: number): void {
  if (stat.isDirectory()) throw new InputError(`${file} is a directory, not a Python file`);
  if (!stat.isFile()) throw new InputError(`${file} is ${specialKind(stat)}, not a regular file; only regular files are read`);
  if (stat.size > maxBytes) throw new InputError(`${file} is ${describeBytes(stat.size)}, more than the ${describeBytes(maxBytes)} read of a script; not read`);
}

function specialKind(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'a special file';
}

function describeBytes(bytes: number): string {
  return bytes >= 1 << 20 ? `${(bytes / (1 << 20)).toFixed(1)} MiB` : `${bytes} bytes`;
}

/**
 * Up to maxBytes + 1 bytes: one more than allowed tells a file that grew after its size was
 * checked (or that reports no size, as /proc files do) from one that is exactly at the limit.
 */
async function readAtMost(handle: fs.FileHandle, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total <= maxBytes) {
    const chunk = Buffer.alloc(Math.min(READ_CHUNK_BYTES, maxBytes + 1 - total));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) break;
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
  }
  return Buffer.concat(chunks, total);
}
