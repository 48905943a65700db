import * as assert from 'node:assert/strict';
import { dirnameOf, findProjectRoot, isInside, joinPath, MemoryProjectFiles, normalizePath, relativeTo } from '../../../../src/core/project/projectFiles';

describe('project files (projectFiles.ts)', () => {
  it('normalizes paths with string operations alone', () => {
    assert.equal(normalizePath('/a/b/../c/./d/'), '/a/c/d');
    assert.equal(normalizePath('C:\\work\\proj\\train.py'), 'C:/work/proj/train.py');
    assert.equal(normalizePath('C:/work/../..'), 'C:');
    assert.equal(normalizePath('/..'), '/');
    assert.equal(joinPath('/a', 'b', '..', 'c.py'), '/a/c.py');
    assert.equal(dirnameOf('/a/b.py'), '/a');
    assert.equal(dirnameOf('/b.py'), '/');
    assert.ok(isInside('/a/b/c.py', '/a/b'));
    assert.ok(!isInside('/a/bc/c.py', '/a/b'));
    assert.equal(relativeTo('/a/b/c.py', '/a'), 'b/c.py');
    assert.equal(relativeTo('/x/c.py', '/a'), '/x/c.py');
  });

  it('finds the root upward from the file by its markers, else takes the file\'s folder', () => {
    for (const marker of ['.git', 'pyproject.toml', 'setup.py', 'setup.cfg']) {
      const files = new MemoryProjectFiles([
        [`/work/proj/${marker}`, ''],
        ['/work/proj/scripts/train/run.py', ''],
      ]);
      assert.equal(findProjectRoot('/work/proj/scripts/train/run.py', files), '/work/proj', marker);
    }
    const nested = new MemoryProjectFiles([
      ['/work/.git', ''],
      ['/work/proj/setup.cfg', ''],
      ['/work/proj/train.py', ''],
    ]);
    assert.equal(findProjectRoot('/work/proj/train.py', nested), '/work/proj');
    assert.equal(findProjectRoot('/tmp/lone/train.py', new MemoryProjectFiles([['/tmp/lone/train.py', '']])), '/tmp/lone');
  });

  it('an in-memory project answers for files and the folders above them', () => {
    const files = new MemoryProjectFiles([['/p/pkg/mod.py', 'X = 1']]);
    assert.equal(files.read('/p/pkg/mod.py'), 'X = 1');
    assert.equal(files.read('/p/pkg'), undefined);
    assert.ok(files.exists('/p/pkg') && files.exists('/p') && !files.exists('/p/other'));
  });
});
