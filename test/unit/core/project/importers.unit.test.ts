import * as assert from 'node:assert/strict';
import { Importers } from '../../../../src/core/project/importers';

describe('Importers (which open scripts read which project files)', () => {
  it('names the scripts that read a changed file, not the file itself nor scripts without it', () => {
    const importers = new Importers();
    importers.track('file:///p/train.py', ['/p/model.py', '/p/models/__init__.py']);
    importers.track('file:///p/eval.py', ['/p/model.py']);
    importers.track('file:///p/lone.py', []);
    importers.track('file:///p/model.py', ['/p/layers.py']);
    assert.deepEqual(importers.of('/p/model.py', 'file:///p/model.py').sort(), ['file:///p/eval.py', 'file:///p/train.py']);
    assert.deepEqual(importers.of('\\p\\..\\p\\layers.py'), ['file:///p/model.py'], 'paths compare normalized');
    assert.deepEqual(importers.of('/p/other.py'), []);
    assert.deepEqual(importers.all().sort(), ['file:///p/eval.py', 'file:///p/lone.py', 'file:///p/model.py', 'file:///p/train.py']);
  });

  it('forgets a closed script and one estimated without its project', () => {
    const importers = new Importers();
    importers.track('a', ['/p/model.py']);
    importers.track('b', ['/p/model.py']);
    importers.forget('a');
    importers.track('b', undefined);
    assert.deepEqual(importers.of('/p/model.py'), []);
    assert.deepEqual(importers.all(), []);
  });
});
