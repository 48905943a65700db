import * as assert from 'node:assert/strict';
import { rangeOf } from '../../../../src/core/parsing/syntax';
import { ParsedModules } from '../../../../src/core/project/parsedModules';
import { realParser } from '../../fixtures';

describe('ParsedModules (imported files parsed once per content)', () => {
  it('parses a file again only when its text changed, and its ranges name the file', async () => {
    const parsed = new ParsedModules(await realParser());
    const first = parsed.parse('/p/model.py', 'import torch\nX = 1\n');
    assert.equal(parsed.parse('/p/model.py', 'import torch\nX = 1\n'), first);
    const changed = parsed.parse('/p/model.py', 'import torch\nX = 2\n');
    assert.notEqual(changed, first);
    const assignment = changed.namedChildren[1]!;
    assert.deepEqual([rangeOf(assignment).startLine, rangeOf(assignment).file], [1, '/p/model.py']);
  });

  it('refuses a file over 2 MB before parsing it', async () => {
    const parsed = new ParsedModules(await realParser());
    assert.throws(() => parsed.parse('/p/huge.py', `X = 1\n${'#'.repeat(2 * 1024 * 1024)}`), /larger than 2 MB/);
  });
});
