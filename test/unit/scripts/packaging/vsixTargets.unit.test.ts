import * as assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ignoreFileFor, nativeBindingFolder, runtimeFiles, VSIX_TARGETS } from '../../../../scripts/packaging/vsixTargets';
import { REPO_ROOT } from '../../fixtures';

describe('.vsix targets', () => {
  it("name onnxruntime files that exist in the installed packages (an onnxruntime update that renames one fails here)", () => {
    for (const target of VSIX_TARGETS) {
      for (const file of runtimeFiles(target)) {
        if (file.includes('*')) {
          const dir = path.join(REPO_ROOT, path.dirname(file));
          assert.ok(readdirSync(dir).some((name) => name.endsWith('.js')), `${target}: ${file}`);
        } else {
          assert.ok(existsSync(path.join(REPO_ROOT, file)), `${target}: ${file}`);
        }
      }
    }
  });

  it("carry each native binding folder's files but a byte-identical darwin/arm64 library copy", () => {
    for (const target of VSIX_TARGETS) {
      const folder = nativeBindingFolder(target);
      if (!folder) continue;
      const dir = path.join(REPO_ROOT, 'node_modules', 'onnxruntime-node', folder);
      const shipped = runtimeFiles(target).filter((file) => file.includes('/bin/')).map((file) => path.basename(file));
      const left = readdirSync(dir).filter((name) => !shipped.includes(name));
      if (target === 'darwin-arm64') {
        assert.deepEqual(left, ['libonnxruntime.1.30.0.dylib']);
        assert.ok(readFileSync(path.join(dir, left[0]!)).equals(readFileSync(path.join(dir, 'libonnxruntime.1.dylib'))));
      } else {
        assert.deepEqual(left, [], target);
      }
    }
  });

  it('give darwin-x64, which onnxruntime-node has no binding for, the WebAssembly runtime and no native one', () => {
    assert.equal(existsSync(path.join(REPO_ROOT, 'node_modules/onnxruntime-node/bin/napi-v6/darwin/x64')), false);
    assert.ok(runtimeFiles('darwin-x64').every((file) => file.startsWith('node_modules/onnxruntime-web/')));
    assert.ok(runtimeFiles('linux-x64').every((file) => file.startsWith('node_modules/onnxruntime-node/')));
  });

  it("write an ignore file that is the repository's allowlist plus the target's runtime", () => {
    const base = readFileSync(path.join(REPO_ROOT, '.vscodeignore'), 'utf8');
    const text = ignoreFileFor(base, 'linux-arm64');
    assert.ok(text.startsWith(base.trimEnd()));
    assert.deepEqual(
      text.split('\n').filter((line) => line.startsWith('!node_modules/onnxruntime-node')),
      ['!node_modules/onnxruntime-node/package.json', '!node_modules/onnxruntime-node/dist/*.js', '!node_modules/onnxruntime-node/bin/napi-v6/linux/arm64/onnxruntime_binding.node', '!node_modules/onnxruntime-node/bin/napi-v6/linux/arm64/libonnxruntime.so.1'],
    );
  });
});
