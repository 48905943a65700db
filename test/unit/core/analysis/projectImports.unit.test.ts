import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ProjectContext } from '../../../../src/core/analysis/analyzeSource';
import { MAX_IMPORT_DEPTH, MAX_IMPORTED_FILES } from '../../../../src/core/analysis/projectModules';
import { estimateSource, IncrementalEstimator } from '../../../../src/core/estimate/incrementalEstimator';
import type { FileEstimate } from '../../../../src/core/estimate/fileEstimate';
import { defaultGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { ParsedModules } from '../../../../src/core/project/parsedModules';
import { MemoryProjectFiles, normalizePath, type ProjectFiles } from '../../../../src/core/project/projectFiles';
import { diskProjectFiles } from '../../../../src/cli/diskProjectFiles';
import { realParser, REPO_ROOT } from '../../fixtures';

const PROJECTS = path.join(REPO_ROOT, 'test', 'fixtures', 'projects');
const options = { gpu: defaultGpuProfile(), safetyMargin: 0.1 };

interface ManifestEntry {
  readonly project: string;
  readonly entry: string;
  readonly model: string;
  readonly batchSize: number;
  readonly classFile: string;
}
const manifest = JSON.parse(readFileSync(path.join(PROJECTS, 'manifest.json'), 'utf8')) as { projects: ManifestEntry[] };
const truths = JSON.parse(readFileSync(path.join(PROJECTS, 'truths.json'), 'utf8')) as { projects: Record<string, { params: number; className: string }> };

async function context(files: ProjectFiles, file: string, root: string): Promise<ProjectContext> {
  const parsed = new ParsedModules(await realParser());
  return { source: { files, path: normalizePath(file), root: normalizePath(root) }, parse: (p, text) => parsed.parse(p, text) };
}

/** Estimates `/p/<entry>` of an in-memory project (root `/p`) with the analysis pass. */
async function estimateProject(files: Record<string, string>, entry = 'train.py'): Promise<FileEstimate> {
  const project = new MemoryProjectFiles(Object.entries(files).map(([name, text]) => [`/p/${name}`, text]));
  return estimateSource(entry, files[entry]!, await realParser(), options, await context(project, `/p/${entry}`, '/p'));
}

const allNotes = (estimate: FileEstimate): string[] => [...estimate.warnings, ...estimate.models.flatMap((m) => m.notes.map((n) => n.message))];

const MLP = `import torch.nn as nn

class Net(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.fc1 = nn.Linear(32, width)
        self.fc2 = nn.Linear(width, 10)

    def forward(self, x):
        return self.fc2(self.fc1(x))
`;

const TRAIN = (imports: string, build = 'Net()') => `import torch
${imports}

model = ${build}
optimizer = torch.optim.Adam(model.parameters())
x = torch.randn(16, 32)
loss = model(x).sum()
loss.backward()
optimizer.step()
`;

describe('imports within the project (projectModules.ts)', () => {
  describe('the fixture projects, against the parameter counts PyTorch gives (truths.json)', () => {
    for (const entry of manifest.projects) {
      it(`${entry.project}/${entry.entry}: finds ${entry.model}, ${truths.projects[entry.project]!.className} with ${truths.projects[entry.project]!.params} parameters, batch ${entry.batchSize}`, async () => {
        const root = path.join(PROJECTS, entry.project);
        const file = path.join(root, entry.entry);
        const estimate = estimateSource(entry.entry, readFileSync(file, 'utf8'), await realParser(), options, await context(diskProjectFiles, file, root));
        const model = estimate.models.find((m) => m.name === entry.model);
        assert.ok(model, `no model ${entry.model}: ${JSON.stringify(estimate.warnings)}`);
        assert.equal(model.params, truths.projects[entry.project]!.params);
        assert.equal(model.batchSize, entry.batchSize);
        assert.equal(model.classFile, entry.classFile);
        assert.ok(model.classLine !== null && readFileSync(path.join(root, entry.classFile), 'utf8').split('\n')[model.classLine - 1]!.startsWith(`class ${truths.projects[entry.project]!.className}(`));
      });
    }

    it('the broken helper module and the import cycle are named in notes', async () => {
      const notesOf = async (project: string, entry: string) => {
        const root = path.join(PROJECTS, project);
        const file = path.join(root, entry);
        return allNotes(estimateSource(entry, readFileSync(file, 'utf8'), await realParser(), options, await context(diskProjectFiles, file, root)));
      };
      assert.ok((await notesOf('broken_helper', 'train.py')).some((n) => n.includes('`utils` (utils.py) has syntax errors')));
      assert.ok((await notesOf('import_cycle', 'train.py')).some((n) => n.includes('Import cycle unet -> blocks -> unet')));
    });
  });

  it('without a project the same script finds no model (the class is in another file)', async () => {
    const estimate = estimateSource('train.py', TRAIN('from net import Net'), await realParser(), options);
    assert.equal(estimate.models.length, 0);
  });

  it('resolves `from net import Net`, `import net` + `net.Net(...)`, aliases and packages', async () => {
    for (const [imports, build, files] of [
      ['from net import Net', 'Net(width=128)', { 'net.py': MLP }],
      ['import net', 'net.Net(width=128)', { 'net.py': MLP }],
      ['import nets.mlp as m', 'm.Net(width=128)', { 'nets/__init__.py': '', 'nets/mlp.py': MLP }],
      ['import nets.mlp', 'nets.mlp.Net(width=128)', { 'nets/mlp.py': MLP }],
      ['from nets import mlp', 'mlp.Net(width=128)', { 'nets/__init__.py': '', 'nets/mlp.py': MLP }],
      ['from nets import Net', 'Net(width=128)', { 'nets/__init__.py': 'from .mlp import Net\n', 'nets/mlp.py': MLP }],
      ['from nets import *', 'Net(width=128)', { 'nets/__init__.py': 'from .mlp import *\n', 'nets/mlp.py': MLP }],
      ['from nets.mlp import Net as Model', 'Model(width=128)', { 'nets/__init__.py': '', 'nets/mlp.py': MLP }],
      ['import nets', 'nets.REGISTRY["mlp"](width=128)', { 'nets/__init__.py': 'from .mlp import Net\nREGISTRY = {"mlp": Net}\n', 'nets/mlp.py': MLP }],
    ] as const) {
      const estimate = await estimateProject({ 'train.py': TRAIN(imports, build), ...files });
      assert.equal(estimate.models[0]?.params, 32 * 128 + 128 + 128 * 10 + 10, `${imports}: ${JSON.stringify(allNotes(estimate))}`);
    }
  });

  it('a script whose model module is not in the project says which import is missing and where it looked', async () => {
    const estimate = await estimateProject({ 'train.py': `import os\nimport numpy as np\n${TRAIN('from model import Net')}` });
    const note = estimate.warnings.find((w) => w.startsWith('No PyTorch model found')) ?? '';
    assert.ok(note?.includes('`model` is not a file of the project (looked for model.py and model/ in /p, /p/src'), note);
    assert.ok(!note.includes('`numpy`') && !note.includes('`os`') && !note.includes('`torch`'), note);
  });

  it('honours __all__ in `from m import *`: a name left out of it is not bound', async () => {
    const withAll = `${MLP}\n__all__ = ["Other"]\nOther = Net\n`;
    const estimate = await estimateProject({ 'train.py': TRAIN('from net import *'), 'net.py': withAll });
    assert.equal(estimate.models.length, 0);
    const listed = await estimateProject({ 'train.py': TRAIN('from net import *', 'Other()'), 'net.py': withAll });
    assert.equal(listed.models[0]?.params, 32 * 64 + 64 + 64 * 10 + 10);
  });

  it("an imported module's functions read the names that module imported, not the script's", async () => {
    const helper = 'import torch.nn as layers\n\ndef make(width):\n    return layers.Sequential(layers.Linear(32, width), layers.ReLU(), layers.Linear(width, 10))\n';
    const estimate = await estimateProject({ 'train.py': TRAIN('from helper import make', 'make(100)'), 'helper.py': helper });
    assert.equal(estimate.models[0]?.params, 32 * 100 + 100 + 100 * 10 + 10);
  });

  it('the imported module runs as a module: its `if __name__ == "__main__":` block does not', async () => {
    const net = `${MLP}\nif __name__ == "__main__":\n    Net = None\n`;
    const estimate = await estimateProject({ 'train.py': TRAIN('from net import Net'), 'net.py': net });
    assert.equal(estimate.models.length, 1);
  });

  it('notes a missing relative import, a relative import above the root, and a missing name, each naming the module', async () => {
    const missing = await estimateProject({ 'pkg/train.py': TRAIN('from .layers import Net'), 'pkg/__init__.py': '' }, 'pkg/train.py');
    assert.ok(allNotes(missing).some((n) => n.includes('Relative import `.layers` in pkg/train.py: no layers.py or layers/__init__.py in pkg')), JSON.stringify(allNotes(missing)));
    const above = await estimateProject({ 'train.py': TRAIN('from ..shared import Net') });
    assert.ok(allNotes(above).some((n) => n.includes('outside the project root /p') && n.includes('..shared.Net')), JSON.stringify(allNotes(above)));
    const noName = await estimateProject({ 'train.py': TRAIN('from net import Network', 'Network()'), 'net.py': MLP });
    assert.ok(allNotes(noName).some((n) => n.includes('`net.Network`: net.py defines no `Network`')), JSON.stringify(allNotes(noName)));
  });

  it('handles an import cycle without looping: the names defined before the cycle closes are used', async () => {
    const a = 'import torch.nn as nn\nWIDTH = 48\nfrom b import Net\n';
    const b = `import torch.nn as nn\nfrom a import WIDTH\nDEFAULT = WIDTH\n\nclass Net(nn.Module):\n    def __init__(self, width=DEFAULT):\n        super().__init__()\n        self.fc = nn.Linear(32, width)\n\n    def forward(self, x):\n        return self.fc(x)\n`;
    const estimate = await estimateProject({ 'train.py': TRAIN('from a import Net', 'Net(WIDTH_FROM_A)').replace('model =', 'from a import WIDTH as WIDTH_FROM_A\nmodel ='), 'a.py': a, 'b.py': b });
    assert.equal(estimate.models[0]?.params, 32 * 48 + 48);
    const selfImport = await estimateProject({ 'train.py': TRAIN('from net import Net'), 'net.py': `from net import *\n${MLP}` });
    assert.equal(selfImport.models.length, 1);
    const circle = await estimateProject({ 'train.py': TRAIN('from a import Net'), 'a.py': 'from b import Net\n', 'b.py': 'from a import Net\n' });
    assert.ok(allNotes(circle).some((n) => n.includes('is imported in a circle')), JSON.stringify(allNotes(circle)));
    const stars = await estimateProject({ 'train.py': TRAIN('from a import *'), 'a.py': 'from b import *\n', 'b.py': 'from a import *\n' });
    assert.equal(stars.models.length, 0);
  });

  it(`stops at ${MAX_IMPORT_DEPTH} nested imports and at ${MAX_IMPORTED_FILES} files, saying so`, async () => {
    const chain: Record<string, string> = {};
    for (let i = 0; i < MAX_IMPORT_DEPTH + 4; i++) chain[`m${i}.py`] = `from m${i + 1} import VALUE\nCOPY = VALUE\n`;
    chain[`m${MAX_IMPORT_DEPTH + 4}.py`] = 'VALUE = 1\n';
    const deep = await estimateProject({ ...chain, 'train.py': TRAIN('from m0 import COPY\nfrom net import Net\nDEPTH = COPY'), 'net.py': MLP });
    assert.ok(allNotes(deep).some((n) => n.includes(`imports nest more than ${MAX_IMPORT_DEPTH} deep`)), JSON.stringify(allNotes(deep)));
    assert.equal(deep.models.length, 1);
    const wide: Record<string, string> = { 'train.py': TRAIN(`from net import Net\nfrom many import *\nTOTAL = ${Array.from({ length: MAX_IMPORTED_FILES + 5 }, (_, i) => `V${i}`).join(' + ')}`), 'net.py': MLP };
    wide['many.py'] = Array.from({ length: MAX_IMPORTED_FILES + 5 }, (_, i) => `from f${i} import V${i}\n`).join('');
    for (let i = 0; i < MAX_IMPORTED_FILES + 5; i++) wide[`f${i}.py`] = `V${i} = ${i}\n`;
    const many = await estimateProject(wide);
    assert.ok(allNotes(many).some((n) => n.includes(`more than ${MAX_IMPORTED_FILES} project files imported`)), JSON.stringify(allNotes(many)));
  });

  it('a module whose top level loops too long is cut short with a note, not a hang', async () => {
    // Each round builds a module, so the loop is not cut after two rounds as a training loop would be.
    const slow = 'import torch.nn as nn\nTABLE = []\nfor i in range(5000):\n    for j in range(5000):\n        nn.Linear(4, 4)\nTABLE = [1]\n';
    const started = performance.now();
    const estimate = await estimateProject({ 'train.py': TRAIN('from net import Net\nfrom slow import TABLE\nN = len(TABLE)'), 'net.py': MLP, 'slow.py': slow });
    assert.ok(performance.now() - started < 5_000);
    assert.ok(allNotes(estimate).some((n) => n.includes('Import of `slow`')), JSON.stringify(allNotes(estimate)));
    assert.equal(estimate.models.length, 1);
  });

  it('`import lightning` beside a plain folder `lightning/` (no __init__.py) is the installed library, as in Python', async () => {
    const script = [
      'import lightning as L',
      'import torch.nn as nn',
      '',
      'class Net(L.LightningModule):',
      '    def __init__(self):',
      '        super().__init__()',
      '        self.fc = nn.Linear(32, 10)',
      '',
      'model = Net()',
    ].join('\n');
    const estimate = await estimateProject({ 'train.py': script, 'lightning/lora_single_gpu.py': 'x = 1\n' });
    assert.equal(estimate.models[0]?.params, 330, JSON.stringify(estimate.warnings));
    // A package of the project's own (with __init__.py) still shadows the library, as it does in Python.
    const shadowed = await estimateProject({ 'train.py': script, 'lightning/__init__.py': 'x = 1\n' });
    assert.equal(shadowed.models.length, 0);
  });

  it('a syntax error in an imported module is a note naming it; what parses is used', async () => {
    const broken = `${MLP}\ndef helper(:\n    pass\n`;
    const estimate = await estimateProject({ 'train.py': TRAIN('from net import Net'), 'net.py': broken });
    assert.ok(allNotes(estimate).some((n) => n.startsWith('Imported module `net` (net.py) has syntax errors')));
    assert.equal(estimate.models[0]?.params, 32 * 64 + 64 + 64 * 10 + 10);
  });

  it('honours a sys.path entry the script adds, and notes one outside the root', async () => {
    const vendored = await estimateProject(
      { 'exp/train.py': TRAIN('import os, sys\nsys.path.append(os.path.join(os.path.dirname(__file__), "..", "vendor"))\nfrom net import Net'), 'vendor/net.py': MLP },
      'exp/train.py',
    );
    assert.equal(vendored.models.length, 1, JSON.stringify(allNotes(vendored)));
    const outside = await estimateProject({ 'train.py': TRAIN('import sys\nsys.path.insert(0, "/elsewhere/lib")\nfrom net import Net'), 'net.py': MLP });
    assert.ok(allNotes(outside).some((n) => n.includes('sys.path entry /elsewhere/lib is outside the project root /p')));
  });

  it('the class line is in the file that defines it, and values read there say their file', async () => {
    const net = `${MLP}\ndef make_optimizer(model):\n    return torch.optim.SGD(model.parameters(), lr=0.1)\n`.replace('import torch.nn as nn', 'import torch\nimport torch.nn as nn');
    const estimate = await estimateProject({ 'train.py': TRAIN('from models.net import Net, make_optimizer').replace('optimizer = torch.optim.Adam(model.parameters())', 'optimizer = make_optimizer(model)'), 'models/net.py': net });
    const model = estimate.models[0]!;
    assert.equal(model.classFile, 'models/net.py');
    assert.equal(model.classLine, 4);
    const optimizer = model.assumptions.find((a) => a.name === 'optimizer')!;
    assert.equal(optimizer.value, 'sgd');
    assert.equal(optimizer.file, 'models/net.py');
    assert.equal(optimizer.line, 14);
    assert.deepEqual(estimate.project, { root: '/p', files: ['/p/models/net.py'] });
  });

  it('an editor estimate follows edits to an imported file, and reuses its analysis while nothing changed', async () => {
    const files = new MemoryProjectFiles([
      ['/p/train.py', TRAIN('from net import Net')],
      ['/p/net.py', MLP],
    ]);
    const project = await context(files, '/p/train.py', '/p');
    const estimator = new IncrementalEstimator(await realParser());
    try {
      const first = estimator.estimate('train.py', TRAIN('from net import Net'), options, project);
      assert.equal(first.models[0]?.params, 32 * 64 + 64 + 64 * 10 + 10);
      const again = estimator.estimate('train.py', TRAIN('from net import Net'), options, project);
      assert.equal(again.models[0]?.params, first.models[0]?.params);
      files.set('/p/net.py', MLP.replace('width=64', 'width=256'));
      const edited = estimator.estimate('train.py', TRAIN('from net import Net'), options, project);
      assert.equal(edited.models[0]?.params, 32 * 256 + 256 + 256 * 10 + 10);
    } finally {
      estimator.dispose();
    }
  });
});

describe('imports within the project, on generated projects', () => {
  /** A small deterministic generator (mulberry32), so a failure names a seed that reproduces it. */
  function random(seed: number): () => number {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  it('200 projects of modules importing each other every way (cycles, stars, missing files, broken syntax) never throw and stay bounded', async () => {
    const names = ['a', 'b', 'pkg/__init__', 'pkg/c', 'pkg/sub/__init__', 'pkg/sub/d', 'e'];
    const imports = ['import a', 'from a import *', 'from b import Net', 'import pkg.c as c', 'from pkg import c', 'from pkg.sub import d', 'from . import c', 'from .c import *', 'from .. import a', 'from ...x import y', 'from .sub.d import Net', 'import missing', 'from e import *', 'import pkg.sub.d'];
    const bodies = [MLP, 'X = 1\n__all__ = ["X", "Net"]\n', 'def helper(:\n', 'Net = None\n', 'for i in range(3):\n    X = i\n', 'from b import Net as Net\n', 'class Net(Net):\n    pass\n'];
    for (let seed = 1; seed <= 200; seed++) {
      const next = random(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
      const files: Record<string, string> = {};
      for (const name of names) {
        if (next() < 0.2) continue;
        const lines = Array.from({ length: 1 + Math.floor(next() * 4) }, () => pick(imports));
        files[`${name}.py`] = `${lines.join('\n')}\n${pick(bodies)}`;
      }
      files['train.py'] = TRAIN(`${pick(imports)}\n${pick(imports)}`, pick(['Net()', 'a.Net()', 'c.Net()', 'd.Net()', 'pkg.sub.d.Net()']));
      const started = performance.now();
      let estimate: FileEstimate;
      try {
        estimate = await estimateProject(files);
      } catch (error) {
        assert.fail(`seed ${seed}: ${error instanceof Error ? error.stack : String(error)}\n${JSON.stringify(files, null, 1)}`);
      }
      assert.ok(performance.now() - started < 3_000, `seed ${seed} took ${performance.now() - started} ms`);
      assert.ok(estimate.models.length <= 1, `seed ${seed}`);
    }
  });
});
