import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { lastStatementBoundary } from '../../../../src/core/parsing/statementBoundary';
import { REPO_ROOT, realParser } from '../../fixtures';

/** The boundary for a limit given as the position of `|` in the source (which is removed). */
function boundaryAtMarker(marked: string): string {
  const limit = marked.indexOf('|');
  const source = marked.replace('|', '');
  return source.slice(0, lastStatementBoundary(source, limit));
}

function pythonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? pythonFiles(full) : entry.name.endsWith('.py') ? [full] : [];
  });
}

describe('lastStatementBoundary', () => {
  it('keeps a source within the limit whole', () => {
    assert.equal(lastStatementBoundary('x = 1\n', 6), 6);
    assert.equal(lastStatementBoundary('x = 1\n', 100), 6);
  });

  for (const [what, marked, kept] of [
    ['cuts before the statement the limit falls in', 'a = 1\nb = 2\nc =| 3\n', 'a = 1\nb = 2\n'],
    ['cuts after a top-level `;` on one long line', 'import torch.nn as nn; model = nn.Linear(8, 8); data = [1, 1,| 1]', 'import torch.nn as nn; model = nn.Linear(8, 8);'],
    ['ignores `;`, `#` and brackets inside strings', 'a = "x; y # ( [" ; b = \'; )\'; c = [|1]', 'a = "x; y # ( [" ; b = \'; )\';'],
    ['ignores lines at column 0 inside brackets', 'a = 1\nx = [\n1,\n2,|\n]\n', 'a = 1\n'],
    ['ignores lines at column 0 inside a triple-quoted string', 'a = 1\ndoc = """\nb = 2; c = 3\n|"""\n', 'a = 1\n'],
    ['follows escaped quotes', 'a = 1\ns = "\\";\\\\"; t = [|1]', 'a = 1\ns = "\\";\\\\";'],
    ['ignores `;` and lines inside a block, keeping the block out whole', 'a = 1\nclass A:\n    x = 1; y = 2\n    z =| 3\n', 'a = 1\n'],
    ['keeps a decorator with its function', 'a = 1\n@decorator\ndef f():\n    return [|1]\n', 'a = 1\n'],
    ['follows backslash continuations', 'a = 1\nb = 1 + \\\n2\nc = 3 +| 4\n', 'a = 1\nb = 1 + \\\n2\n'],
    ['skips comments and blank lines', '# (\n\na = 1  # ;\n\n   # [\nb =| 2\n', '# (\n\na = 1  # ;\n\n   # [\n'],
    ['cuts at a statement that starts exactly at the limit', 'a = 1\n|b = 2\n', 'a = 1\n'],
    ['keeps nothing when the first statement runs past the limit', 'data = [1, 1,| 1]\nmodel = 1\n', ''],
    ['keeps an if with its else (the else goes on with it)', 'a = 1\nif cuda:\n    d = 1\nelse:\n    d =| 2\n', 'a = 1\n'],
    ['keeps a try with its except and finally', 'a = 1\ntry:\n    b = 1\nexcept ImportError:\n    b = 2\nfinally:\n    c =| 3\n', 'a = 1\n'],
    ['keeps an if with its elif', 'a = 1\nif x:\n    b = 1\nelif y:\n    b =| 2\n', 'a = 1\n'],
    ['cuts before a name that only starts like a clause', 'a = 1\nelsewhere = 2\nb =| 3\n', 'a = 1\nelsewhere = 2\n'],
  ] as const) {
    it(what, () => assert.equal(boundaryAtMarker(marked), kept));
  }

  it('cuts every script of the repository into a prefix of whole top-level statements', async function () {
    this.timeout(60_000);
    const parser = await realParser();
    const files = [...pythonFiles(path.join(REPO_ROOT, 'examples')), ...pythonFiles(path.join(REPO_ROOT, 'test', 'fixtures'))];
    assert.ok(files.length >= 20, files.join(', '));
    let cuts = 0;
    for (const file of files) {
      const source = readFileSync(file, 'utf8');
      const tree = parser.parse(source);
      try {
        if (tree.rootNode.hasError) continue;
        const statementStarts = new Set(tree.rootNode.namedChildren.filter((child) => child.type !== 'comment').map((child) => child.startIndex));
        for (let limit = 1; limit < source.length; limit += 37) {
          const cut = lastStatementBoundary(source, limit);
          assert.ok(cut <= limit, `${file} at ${limit}: ${cut}`);
          const lastStart = Math.max(0, ...[...statementStarts].filter((start) => start <= limit));
          assert.ok(cut >= lastStart, `${file} at ${limit}: cut at ${cut}, but a statement starts at ${lastStart}`);
          const afterSemicolon = source[cut - 1] === ';';
          assert.ok(cut === 0 || statementStarts.has(cut) || afterSemicolon, `${file} at ${limit}: ${cut} is no statement start: ${JSON.stringify(source.slice(cut, cut + 30))}`);
          cuts += 1;
        }
      } finally {
        tree.delete();
      }
    }
    assert.ok(cuts > 1000, String(cuts));
  });
});
