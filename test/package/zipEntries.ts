/**
 * Reads a .vsix (a zip): its entries from the central directory, and one entry's bytes. Enough for
 * the files vsce writes (no zip64, stored or deflated entries).
 */
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

export interface ZipEntry {
  readonly name: string;
  readonly size: number;
  readonly method: number;
  readonly compressedSize: number;
  readonly localHeader: number;
}

export class ZipFile {
  readonly entries: readonly ZipEntry[];
  private readonly bytes: Buffer;

  constructor(file: string) {
    this.bytes = readFileSync(file);
    const end = this.bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (end < 0) throw new Error(`${file} is not a zip file (no end of central directory)`);
    const count = this.bytes.readUInt16LE(end + 10);
    let at = this.bytes.readUInt32LE(end + 16);
    const entries: ZipEntry[] = [];
    for (let i = 0; i < count; i++) {
      if (this.bytes.readUInt32LE(at) !== 0x02014b50) throw new Error(`${file}: central directory entry ${i} is damaged`);
      const nameLength = this.bytes.readUInt16LE(at + 28);
      entries.push({
        name: this.bytes.toString('utf8', at + 46, at + 46 + nameLength),
        method: this.bytes.readUInt16LE(at + 10),
        compressedSize: this.bytes.readUInt32LE(at + 20),
        size: this.bytes.readUInt32LE(at + 24),
        localHeader: this.bytes.readUInt32LE(at + 42),
      });
      at += 46 + nameLength + this.bytes.readUInt16LE(at + 30) + this.bytes.readUInt16LE(at + 32);
    }
    this.entries = entries;
  }

  get names(): string[] {
    return this.entries.map((entry) => entry.name);
  }

  read(name: string): Buffer {
    const entry = this.entries.find((candidate) => candidate.name === name);
    if (!entry) throw new Error(`no entry ${name}`);
    const at = entry.localHeader;
    const start = at + 30 + this.bytes.readUInt16LE(at + 26) + this.bytes.readUInt16LE(at + 28);
    const data = this.bytes.subarray(start, start + entry.compressedSize);
    if (entry.method === 0) return Buffer.from(data);
    if (entry.method === 8) return inflateRawSync(data);
    throw new Error(`${name}: compression method ${entry.method} is not read here`);
  }
}
