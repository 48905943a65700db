import * as assert from 'node:assert/strict';
import * as fc from 'fast-check';
import { MAX_MESSAGE_CHARS, plainMessage } from '../../../../src/core/remote/plainMessage';

describe('remote: text from the host in a pop-up', () => {
  it('keeps a plain one-line message as it is', () => {
    assert.equal(plainMessage('The harness exited with code 1: RuntimeError: CUDA out of memory.'), 'The harness exited with code 1: RuntimeError: CUDA out of memory.');
  });

  it('drops colours, cursor moves, titles and other controls, and joins lines', () => {
    const harness = '\x1b[1;31mError\x1b[0m: bad config\r\n  line 2\x07\x1b]0;owned\x07\x1b[2J\x1b[H\tdone\x00\x7f\x9b31m \u202eevil\u202c';
    assert.equal(plainMessage(harness), 'Error: bad config line 2 done evil');
  });

  it('cannot write a link VS Code would render in a notification', () => {
    assert.equal(plainMessage('click [here](command:workbench.action.terminal.sendSequence)'), 'click [here] (command:workbench.action.terminal.sendSequence)');
  });

  it('bounds the length on a code-point boundary and marks the cut', () => {
    const long = plainMessage(`${'x'.repeat(MAX_MESSAGE_CHARS - 2)}😀😀😀`);
    assert.equal([...long].length, MAX_MESSAGE_CHARS);
    assert.ok(long.endsWith('😀…'));
    assert.equal(plainMessage('a b c d e', 5), 'a b…');
  });

  it('always gives one bounded line without control characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 600 }), (text) => {
        const shown = plainMessage(text);
        assert.ok([...shown].length <= MAX_MESSAGE_CHARS);
        // eslint-disable-next-line no-control-regex -- the property is that no control character is left
        assert.ok(!/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/.test(shown), JSON.stringify(shown));
        assert.ok(!shown.includes(']('));
        assert.equal(shown, shown.trim());
      }),
      { numRuns: 300 },
    );
  });
});
