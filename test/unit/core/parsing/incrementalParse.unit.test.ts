import * as assert from 'node:assert/strict';
import { reparse, type TextChange } from '../../../../src/core/parsing/incrementalParse';
import { fixture, realParser } from '../../fixtures';

describe('incremental parsing', () => {
  const cases: [string, TextChange[]][] = [
    ['an edited number', [{ offset: 0, length: 0, text: '' }]],
    ['typing a new line', [{ offset: 10, length: 0, text: '\nHIDDEN = 4096\n' }]],
    ['deleting a block', [{ offset: 40, length: 120, text: '' }]],
    ['non-ASCII text, then an edit after it', [{ offset: 5, length: 0, text: '# größe → 𝛼\n' }, { offset: 200, length: 3, text: '512' }]],
  ];
  for (const [what, changes] of cases) {
    it(`gives the same tree as a fresh parse after ${what}`, async () => {
      const parser = await realParser();
      const source = fixture('cnn_cifar');
      const first = parser.parse(source);
      const { tree, source: edited } = reparse(parser, first, source, changes);
      const fresh = parser.parse(edited);
      try {
        assert.equal(tree.rootNode.toString(), fresh.rootNode.toString());
        assert.equal(tree.rootNode.text, edited);
      } finally {
        for (const t of [first, tree, fresh]) t.delete();
      }
    });
  }
});
