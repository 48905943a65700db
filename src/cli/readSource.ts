import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export class InputError extends Error {}

const PYTHON_EXTENSIONS = new Set(['.py', '.pyw', '.pyi']);

/** Reads a Python source file, refusing what is not one with a message a user can act on. */
export async function readPythonSource(file: string): Promise<string> {
  if (!PYTHON_EXTENSIONS.has(path.extname(file).toLowerCase())) {
    throw new InputError(`${file} is not a Python file (expected a .py file)`);
  }
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError(code === 'ENOENT' ? `${file}: no such file` : `${file}: cannot read (${code ?? String(error)})`);
  }
  if (stat.isDirectory()) throw new InputError(`${file} is a directory, not a Python file`);
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(file);
  } catch (error) {
    throw new InputError(`${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  if (bytes.subarray(0, 8192).includes(0)) throw new InputError(`${file} is a binary file, not Python source`);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (text.includes('\uFFFD') && !bytes.includes(Buffer.from('\uFFFD'))) {
    throw new InputError(`${file} is not UTF-8 text`);
  }
  return text;
}
