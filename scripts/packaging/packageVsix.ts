/**
 * `npm run package [target ...]`: builds the extension for production and packs one .vsix per
 * target (default: all of VSIX_TARGETS) into build/vsix/, each with only its own onnxruntime and
 * the README with its screenshots embedded; then prints each file's size.
 */
import { createVSIX } from '@vscode/vsce';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { findPackageRoot } from '../../src/core/parsing/parserAssets';
import { readmeWithInlineImages } from './packagedReadme';
import { ignoreFileFor, isVsixTarget, VSIX_DIR, VSIX_TARGETS, vsixFileName, type VsixTarget } from './vsixTargets';

async function main(args: readonly string[]): Promise<void> {
  const unknown = args.filter((arg) => !isVsixTarget(arg));
  if (unknown.length > 0) throw new Error(`unknown target ${unknown.join(', ')}; the targets are ${VSIX_TARGETS.join(', ')}`);
  const targets: readonly VsixTarget[] = args.length > 0 ? (args as VsixTarget[]) : VSIX_TARGETS;

  const root = findPackageRoot(__dirname);
  const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const out = path.join(root, VSIX_DIR);
  mkdirSync(out, { recursive: true });
  execFileSync(process.execPath, ['esbuild.config.mjs', '--production'], { cwd: root, stdio: 'inherit' });

  const readme = path.posix.join(VSIX_DIR, 'README.md');
  writeFileSync(path.join(root, readme), readmeWithInlineImages(readFileSync(path.join(root, 'README.md'), 'utf8'), root, (file) => readFileSync(file)));
  const vscodeignore = readFileSync(path.join(root, '.vscodeignore'), 'utf8');

  const sizes: string[] = [];
  for (const target of targets) {
    const ignoreFile = path.join(out, `${target}.vscodeignore`);
    writeFileSync(ignoreFile, ignoreFileFor(vscodeignore, target));
    const packagePath = path.join(out, vsixFileName(target, version));
    await createVSIX({ cwd: root, packagePath, target, ignoreFile, readmePath: readme, rewriteRelativeLinks: false, allowMissingRepository: true });
    const bytes = statSync(packagePath).size;
    sizes.push(`| ${target} | ${path.posix.join(VSIX_DIR, path.basename(packagePath))} | ${(bytes / 2 ** 20).toFixed(1)} MiB (${bytes} bytes) |`);
  }
  console.log(['', '| target | file | size |', '| --- | --- | --- |', ...sizes].join('\n'));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`package: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
