import * as assert from 'node:assert/strict';
import { sysPathEntries } from '../../../../src/core/analysis/sysPath';
import { copySyntaxTree } from '../../../../src/core/parsing/syntaxTree';
import { realParser } from '../../fixtures';

async function entries(source: string, file = '/p/exp/train.py'): Promise<string[]> {
  const tree = (await realParser()).parse(source);
  try {
    return sysPathEntries(copySyntaxTree(tree, source), file);
  } finally {
    tree.delete();
  }
}

describe('sysPathEntries (the folders a script adds to sys.path)', () => {
  it('reads literals and what os.path and pathlib make of __file__', async () => {
    assert.deepEqual(await entries('import sys\nsys.path.append("../lib")\n'), ['/p/lib']);
    assert.deepEqual(await entries('import sys\nsys.path.insert(0, "/opt/code")\n'), ['/opt/code']);
    assert.deepEqual(await entries('import os, sys\nsys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n'), ['/p']);
    assert.deepEqual(await entries('import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "vendor"))\n'), ['/p/vendor']);
    assert.deepEqual(await entries('import sys\nfrom pathlib import Path\nsys.path.append(str(Path(__file__).resolve().parent.parent / "src"))\n'), ['/p/src']);
    assert.deepEqual(await entries('import sys\nfrom pathlib import Path\nsys.path.append(str(Path(__file__).parents[1]))\n'), ['/p']);
    assert.deepEqual(await entries('import os, sys\nROOT = os.path.dirname(os.path.dirname(__file__))\nsys.path.append(ROOT)\n'), ['/p']);
  });

  it('leaves out what it cannot read', async () => {
    assert.deepEqual(await entries('import os, sys\nsys.path.append(os.environ["CODE"])\nsys.path.append(args.lib)\nsys.path.append()\n'), []);
  });
});
