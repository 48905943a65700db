import * as assert from 'node:assert/strict';
import { analyzeSource } from '../../../../src/core/analysis/analyzeSource';
import type { DictValue, PyValue } from '../../../../src/core/analysis/interpreter/pyValues';
import { estimateSource } from '../../../../src/core/estimate/incrementalEstimator';
import type { FileEstimate } from '../../../../src/core/estimate/fileEstimate';
import { defaultGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { ParsedModules } from '../../../../src/core/project/parsedModules';
import { MemoryProjectFiles } from '../../../../src/core/project/projectFiles';
import { realParser } from '../../fixtures';

const options = { gpu: defaultGpuProfile(), safetyMargin: 0.1 };

/** Estimates `/p/<entry>` of an in-memory project (root `/p`) with the analysis pass. */
async function estimateProject(files: Record<string, string>, entry = 'train.py'): Promise<FileEstimate> {
  const project = new MemoryProjectFiles(Object.entries(files).map(([name, text]) => [`/p/${name}`, text]));
  const parsed = new ParsedModules(await realParser());
  return estimateSource(entry, files[entry]!, await realParser(), options, { source: { files: project, path: `/p/${entry}`, root: '/p' }, parse: (p, text) => parsed.parse(p, text) });
}

const allNotes = (estimate: FileEstimate): string[] => [...estimate.warnings, ...estimate.models.flatMap((m) => m.notes.map((n) => n.message))];

/** Parameters of `nn.Linear(32, width)` then `nn.Linear(width, classes)`. */
const mlpParams = (width: number, classes = 10) => 32 * width + width + width * classes + classes;

const MLP = (name: string) => `import torch.nn as nn


class ${name}(nn.Module):
    def __init__(self, width=64, num_classes=10):
        super().__init__()
        self.fc1 = nn.Linear(32, width)
        self.fc2 = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.fc2(self.fc1(x))
`;

/** timm's layout: a registry module, architectures that register builders, a package that star-imports them. */
const TIMM_LIKE = {
  'models/__init__.py': 'from .registry import create_model\nfrom .wide import *\nfrom .narrow import *\n',
  'models/registry.py': `_entrypoints = {}


def register_model(fn):
    _entrypoints[fn.__name__] = fn
    return fn


def create_model(name, **kwargs):
    if name not in _entrypoints:
        raise RuntimeError('Unknown model (%s)' % name)
    return _entrypoints[name](**kwargs)
`,
  'models/wide.py': `${MLP('Wide')}\nfrom .registry import register_model\n\n__all__ = ['Wide']\n\n\n@register_model\ndef wide_256(**kwargs):\n    return Wide(width=256, **kwargs)\n`,
  'models/narrow.py': `${MLP('Narrow')}\nfrom models.registry import register_model\n\n__all__ = ['Narrow']\n\n\n@register_model\ndef narrow_16(**kwargs):\n    return Narrow(width=16, **kwargs)\n`,
};

const TIMM_TRAIN = (modelOption: string) => `import argparse
import torch
from models import create_model

parser = argparse.ArgumentParser()
parser.add_argument('--model', ${modelOption})
parser.add_argument('--batch-size', type=int, default=48)
args = parser.parse_args()

model = create_model(args.model, num_classes=5)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = torch.utils.data.DataLoader(torch.load('data.pt'), batch_size=args.batch_size)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
`;

describe('models chosen through a registry or a factory of the project', () => {
  it('a builder registered by a decorator when its package star-imports it is found by the argparse default that names it', async () => {
    for (const [name, width] of [
      ['wide_256', 256],
      ['narrow_16', 16],
    ] as const) {
      const estimate = await estimateProject({ 'train.py': TIMM_TRAIN(`default='${name}'`), ...TIMM_LIKE });
      const model = estimate.models[0];
      assert.equal(model?.params, mlpParams(width, 5), `${name}: ${JSON.stringify(allNotes(estimate))}`);
      assert.equal(model.batchSize, 48);
      assert.equal(model.optimizer, 'sgd-momentum');
    }
  });

  it('without a default, or with a name nobody registered, says which registry and which names it holds', async () => {
    const required = await estimateProject({ 'train.py': TIMM_TRAIN('required=True'), ...TIMM_LIKE });
    assert.equal(required.models.length, 0);
    const none = allNotes(required).find((note) => note.startsWith('The model registry `_entrypoints`')) ?? '';
    assert.ok(none.includes('holds 2 builders (wide_256, narrow_16)') && none.includes('`name` is None'), JSON.stringify(allNotes(required)));
    const unknown = await estimateProject({ 'train.py': TIMM_TRAIN("default='resnet50'"), ...TIMM_LIKE });
    assert.ok(allNotes(unknown).some((note) => note.includes('"resnet50" (`name`) is not one of them')), JSON.stringify(allNotes(unknown)));
  });

  it("builders registered with timm's @register_model in a module the script imports only for that are what timm.create_model builds", async () => {
    const files = {
      'models/__init__.py': '',
      'models/nets.py': `${MLP('Net')}\nfrom timm.models.registry import register_model\n\n\n@register_model\ndef net_small(pretrained=False, **kwargs):\n    return Net(width=24, **kwargs)\n`,
      'main.py': `import argparse
import torch
from timm.models import create_model
import models.nets  # noqa: F401  registers the models

parser = argparse.ArgumentParser()
parser.add_argument('--model', {option})
parser.add_argument('--drop-path', type=float, default=None)
args = parser.parse_args()
model = create_model(args.model, pretrained=False, num_classes=3, drop_path_rate=args.drop_path)
optimizer = torch.optim.AdamW(model.parameters())
`,
    };
    const estimate = await estimateProject({ ...files, 'main.py': files['main.py'].replace('{option}', "default='net_small'") }, 'main.py');
    assert.equal(estimate.models[0]?.params, mlpParams(24, 3), JSON.stringify(allNotes(estimate)));
    const unknown = await estimateProject({ ...files, 'main.py': files['main.py'].replace('{option}', 'type=str') }, 'main.py');
    assert.ok(allNotes(unknown).some((note) => note.includes("timm's registry (the project's @register_model builders)` holds 1 builder (net_small), and `args.model` is None")), JSON.stringify(allNotes(unknown)));
  });

  it('a package importing many costly modules ahead of the one the script needs still gives that one: running modules ahead of need has its own share of the imports budget', async () => {
    const files: Record<string, string> = { 'train.py': 'import torch\nfrom models import Net\nmodel = Net(width=40)\noptimizer = torch.optim.Adam(model.parameters())\n', 'models/target.py': MLP('Net') };
    const many = 40;
    for (let i = 0; i < many; i++) files[`models/m${i}.py`] = `TABLE = [j * ${i} for j in range(3000)]\n`;
    files['models/__init__.py'] = `${Array.from({ length: many }, (_, i) => `from .m${i} import *\n`).join('')}from .target import Net\n`;
    const estimate = await estimateProject(files);
    assert.equal(estimate.models[0]?.params, mlpParams(40), JSON.stringify(allNotes(estimate)));
  });

  it('a registry object whose register_module() decorates classes, built from a config dict with a type key', async () => {
    const registry = `class Registry:
    def __init__(self, name):
        self.name = name
        self._module_dict = {}

    def register_module(self, name=None):
        def _register(cls):
            self._module_dict[name or cls.__name__] = cls
            return cls
        return _register

    def get(self, key):
        return self._module_dict.get(key)

    def build(self, cfg):
        args = cfg.copy()
        return self.get(args.pop('type'))(**args)


MODELS = Registry('models')
`;
    const files = {
      'lib/registry.py': registry,
      'lib/__init__.py': 'from .registry import MODELS\nfrom . import heads\n',
      'lib/heads.py': `${MLP('LinearHead')}
from .registry import MODELS

MODELS.register_module()(LinearHead)


@MODELS.register_module(name='deep')
class DeepHead(nn.Module):
    def __init__(self, width=64, num_classes=10):
        super().__init__()
        self.fc1 = nn.Linear(32, width)
        self.fc2 = nn.Linear(width, width)
        self.fc3 = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.fc3(self.fc2(self.fc1(x)))
`,
      'train.py': `import torch\nfrom lib import MODELS\n\ncfg = dict(model=dict(type='deep', width=40))\nmodel = MODELS.build(cfg['model'])\noptimizer = torch.optim.Adam(model.parameters())\n`,
    };
    const estimate = await estimateProject(files);
    assert.equal(estimate.models[0]?.params, 32 * 40 + 40 + 40 * 40 + 40 + 40 * 10 + 10, JSON.stringify(allNotes(estimate)));
  });

  it("a Registry class deriving from dict (maskrcnn-benchmark's) fills itself through register() and is indexed by name", async () => {
    const registry = `def _register_generic(module_dict, module_name, module):
    assert module_name not in module_dict
    module_dict[module_name] = module


class Registry(dict):
    def __init__(self, *args, **kwargs):
        super(Registry, self).__init__(*args, **kwargs)

    def register(self, module_name, module=None):
        if module is not None:
            _register_generic(self, module_name, module)
            return

        def register_fn(fn):
            _register_generic(self, module_name, fn)
            return fn

        return register_fn


BACKBONES = Registry()
`;
    const backbones = `${MLP('Net')}\nfrom utils import registry\n\n\n@registry.BACKBONES.register('MLP-48')\ndef build_mlp(cfg):\n    return Net(width=48)\n\n\nregistry.BACKBONES.register('MLP-8', lambda cfg: None)\n`;
    for (const lookup of ["registry.BACKBONES[cfg['BODY']](cfg)", "registry.BACKBONES.get(cfg['BODY'])(cfg)"]) {
      const train = `import torch\nfrom utils import registry\nimport backbones  # noqa: F401\n\ncfg = {'BODY': 'MLP-48'}\nassert cfg['BODY'] in registry.BACKBONES\nmodel = ${lookup}\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n`;
      const estimate = await estimateProject({ 'train.py': train, 'utils/__init__.py': '', 'utils/registry.py': registry, 'backbones.py': backbones });
      assert.equal(estimate.models[0]?.params, mlpParams(48), `${lookup}: ${JSON.stringify(allNotes(estimate))}`);
    }
  });

  it("fvcore's (detectron2's) and mmengine's Registry objects hold the project's classes: get(name), build(cfg), build_from_cfg", async () => {
    const project = (registry: string, build: string) => ({
      'modeling/__init__.py': 'from .heads import HEADS\n',
      'modeling/heads.py': `import torch.nn as nn
${registry}

HEADS = Registry('heads')


@HEADS.${build.startsWith('HEADS.get') ? 'register()' : "register_module(name='wide')"}
class WideHead(nn.Module):
    def __init__(self, width=64, num_classes=10):
        super().__init__()
        self.fc1 = nn.Linear(32, width)
        self.fc2 = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.fc2(self.fc1(x))
`,
      'train.py': `import torch\nfrom modeling import HEADS\n${build.includes('build_from_cfg') ? 'from mmengine.registry import build_from_cfg\n' : ''}\ncfg = {'head': 'WideHead', 'width': 20}\nmodel = ${build}\noptimizer = torch.optim.Adam(model.parameters())\n`,
    });
    for (const [registry, build] of [
      ['from fvcore.common.registry import Registry', "HEADS.get(cfg['head'])(width=cfg['width'])"],
      ['from detectron2.utils.registry import Registry', "HEADS.get(cfg['head'])(width=cfg['width'])"],
      ['from mmengine.registry import Registry', "HEADS.build(dict(type='wide', width=20))"],
      ['from mmcv.utils import Registry', "HEADS.build(dict(type='wide'), default_args=dict(width=20))"],
      ['from mmengine.registry import Registry', "build_from_cfg(dict(type='wide', width=20), HEADS)"],
    ] as const) {
      const estimate = await estimateProject(project(registry, build));
      assert.equal(estimate.models[0]?.params, mlpParams(20), `${registry} / ${build}: ${JSON.stringify(allNotes(estimate))}`);
    }
    const unknown = await estimateProject(project('from fvcore.common.registry import Registry', "HEADS.get(cfg['missing'])()"));
    assert.ok(allNotes(unknown).some((note) => note.includes('The model registry `Registry("heads")` holds 1 builder (WideHead)')), JSON.stringify(allNotes(unknown)));
  });

  it('a class decorated with a registering factory in the script itself, looked up by a config value, is the one model', async () => {
    const source = `import torch
import torch.nn as nn

ARCHS = {}


def register(name):
    def wrap(cls):
        ARCHS[name] = cls
        return cls
    return wrap


@register('mlp')
class Net(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc = nn.Linear(32, cfg['width'])

    def forward(self, x):
        return self.fc(x)


@register('other')
class Other(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.fc = nn.Linear(32, width)

    def forward(self, x):
        return self.fc(x)


def build_model(cfg):
    cfg = dict(cfg)
    return ARCHS[cfg.pop('arch')](cfg)


model = build_model({'arch': 'mlp', 'width': 24})
optimizer = torch.optim.Adam(model.parameters())
`;
    const estimate = await estimateProject({ 'train.py': source });
    // The class registered beside it is the other choice, not a second model built with its defaults.
    assert.deepEqual(
      estimate.models.map((m) => [m.name, m.params]),
      [['model', 32 * 24 + 24]],
      JSON.stringify(allNotes(estimate)),
    );
  });

  it('globals()[name] and eval(name) pick the class the option names, even when the class is defined apart from the lookup', async () => {
    const source = `import argparse
import torch.nn as nn
${MLP('Small').replace('import torch.nn as nn\n', '')}
${MLP('Large').replace('import torch.nn as nn\n', '')}
parser = argparse.ArgumentParser()
parser.add_argument('--arch', default='Large')
args = parser.parse_args()
{lookups}
`;
    const paramsOf = async (lookups: string) => {
      const estimate = estimateSource('train.py', source.replace('{lookups}', lookups), await realParser(), options);
      return Object.fromEntries(estimate.models.map((m) => [m.name, m.params]));
    };
    assert.equal((await paramsOf('by_globals = globals()[args.arch](width=96)')).by_globals, mlpParams(96));
    // Each alone: a file calling globals() is one group of statements, and eval() must make it one too.
    const byEval = await paramsOf("by_eval = eval(args.arch)(width=80)\nby_eval_dotted = eval('nn.Linear')(32, 4)");
    assert.equal(byEval.by_eval, mlpParams(80));
    assert.equal(byEval.by_eval_dotted, 32 * 4 + 4);
  });

  it('importlib.import_module picks the project module an option names, absolute or relative to a package', async () => {
    for (const pick of ["importlib.import_module(f'models.{args.arch}')", "importlib.import_module('.' + args.arch, package='models')", "importlib.import_module('..' + args.arch, 'models.sub')"]) {
      const train = `import argparse\nimport importlib\nimport torch\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--arch', default='small')\nargs = parser.parse_args()\nmodule = ${pick}\nmodel = getattr(module, 'Net')(width=12)\noptimizer = torch.optim.Adam(model.parameters())\n`;
      const estimate = await estimateProject({ 'train.py': train, 'models/__init__.py': '', 'models/small.py': MLP('Net'), 'models/large.py': MLP('Net').replace('width=64', 'width=512') });
      assert.equal(estimate.models[0]?.params, mlpParams(12), `${pick}: ${JSON.stringify(allNotes(estimate))}`);
    }
  });

  it('builders of the project make the model, its optimizer and its loaders: the loader the training loop iterates gives the batch, named where the script binds it', async () => {
    const files = {
      'data.py': `import torch\nfrom torch.utils.data import DataLoader\n\n\ndef build_loader(cfg, train=True):\n    ds = torch.load('train.pt' if train else 'val.pt')\n    return DataLoader(ds, batch_size=cfg['batch_size'] if train else 1000, shuffle=train)\n`,
      'factory.py': `import torch\n${MLP('Net')}\n\ndef build_model(cfg):\n    return Net(width=cfg['width'])\n\n\ndef build_optimizer(cfg, model):\n    if cfg['opt'] == 'sgd':\n        return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n    return torch.optim.Adam(model.parameters())\n`,
      'train.py': `import torch
from data import build_loader
from factory import build_model, build_optimizer


def main():
    cfg = {'batch_size': 96, 'width': 24, 'opt': 'sgd'}
    val_loader = build_loader(cfg, train=False)
    train_loader = build_loader(cfg)
    model = build_model(cfg)
    optimizer = build_optimizer(cfg, model)
    for x, y in train_loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    for x, y in val_loader:
        model(x)


main()
`,
    };
    const estimate = await estimateProject(files);
    const model = estimate.models[0];
    assert.deepEqual([model?.params, model?.batchSize, model?.optimizer], [mlpParams(24), 96, 'sgd-momentum'], JSON.stringify(allNotes(estimate)));
  });

  it("a trainer class in another file holding the loaders: the batch is its training loader's, not the first one it builds", async () => {
    const files = {
      'engine/__init__.py': 'from .trainer import Trainer\n',
      'engine/trainer.py': `import torch
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, cfg, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        self.val_loader = DataLoader(torch.load('val.pt'), batch_size=1000)
        self.train_loader = DataLoader(torch.load('train.pt'), batch_size=cfg['batch'], shuffle=True)

    def step(self, x, y):
        loss = torch.nn.functional.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()

    def train(self):
        for x, y in self.train_loader:
            self.step(x, y)
`,
      'nets.py': MLP('Net'),
      'train.py': `from engine import Trainer\nfrom nets import Net\n\ncfg = {'batch': 72}\nmodel = Net(width=24)\nTrainer(cfg, model).train()\n`,
    };
    const estimate = await estimateProject(files);
    assert.deepEqual([estimate.models[0]?.params, estimate.models[0]?.batchSize], [mlpParams(24), 72], JSON.stringify(allNotes(estimate)));
  });

  it('a registry of functools.partial builders, with a partial layer factory as an argument, builds the chosen one', async () => {
    const source = `from functools import partial
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, depth=2, width=64, norm_layer=nn.BatchNorm1d, num_classes=10):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), norm_layer(width)]
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.head(self.body(x))


MODELS = {
    'net_small': partial(Net, depth=2, norm_layer=partial(nn.LayerNorm, eps=1e-6)),
    'net_large': partial(Net, 8),
}
model = MODELS['net_small'](num_classes=5)
optimizer = torch.optim.Adam(model.parameters())
`;
    const estimate = estimateSource('train.py', source, await realParser(), options);
    // Two blocks of Linear(64, 64) and LayerNorm(64) (weight and bias), then the head; Net itself is not a second model.
    assert.deepEqual(
      estimate.models.map((m) => [m.name, m.params]),
      [['model', 2 * (64 * 64 + 64 + 2 * 64) + 64 * 5 + 5]],
      JSON.stringify(allNotes(estimate)),
    );
  });

  it('a wrapping decorator leaves the function it wraps in place: its body is followed once, where it is written', async () => {
    const source = `import functools
import torch
import torch.nn as nn


def timed(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@timed
def main():
    model = nn.Sequential(nn.Linear(32, 8), nn.ReLU(), nn.Linear(8, 2))
    optimizer = torch.optim.AdamW(model.parameters())


if __name__ == '__main__':
    main()
`;
    const estimate = await estimateProject({ 'train.py': source });
    assert.deepEqual(
      estimate.models.map((m) => [m.name, m.params, m.optimizer]),
      [['model', 32 * 8 + 8 + 8 * 2 + 2, 'adamw']],
    );
  });
});

describe('values registries are built from', () => {
  async function scopeOf(source: string): Promise<(name: string) => PyValue | undefined> {
    const tree = (await realParser()).parse(source);
    const analysis = analyzeSource(tree, source);
    tree.delete();
    return (name) => analysis.context.scope.get(name);
  }

  it("reads a function's and a class's __name__, tests a dict's keys with in, and copies dicts with dict() and .copy()", async () => {
    const get = await scopeOf(`def build():\n    pass\n\nclass Net:\n    pass\n\nTABLE = {build.__name__: build, Net.__name__: Net}\nHAS = 'build' in TABLE\nLACKS = 'other' not in TABLE\nBASE = {'a': 1, 'b': 2}\nCOPY = dict(BASE, b=3)\nPAIRS = dict([('x', 4)])\nSAME = BASE.copy()\nSAME['a'] = 9\n`);
    assert.deepEqual([...(get('TABLE') as DictValue).entries.keys()], ['build', 'Net']);
    assert.equal(get('HAS'), true);
    assert.equal(get('LACKS'), true);
    assert.deepEqual(Object.fromEntries((get('COPY') as DictValue).entries), { a: 1, b: 3 });
    assert.deepEqual(Object.fromEntries((get('PAIRS') as DictValue).entries), { x: 4 });
    assert.deepEqual(Object.fromEntries((get('BASE') as DictValue).entries), { a: 1, b: 2 });
    assert.deepEqual(Object.fromEntries((get('SAME') as DictValue).entries), { a: 9, b: 2 });
  });

  it('compares library names and the code\'s classes by identity, through a partial\'s .func too', async () => {
    const get = await scopeOf(`import functools\nimport torch.nn as nn\n\nclass Net:\n    pass\n\nnorm = functools.partial(nn.BatchNorm2d, affine=True)\nIS_INSTANCE_NORM = norm.func == nn.InstanceNorm2d\nIS_BATCH_NORM = norm.func == nn.BatchNorm2d\nSAME_CLASS = Net == Net\nOTHER = Net != nn.Linear\n`);
    assert.deepEqual(['IS_INSTANCE_NORM', 'IS_BATCH_NORM', 'SAME_CLASS', 'OTHER'].map(get), [false, true, true, true]);
  });
});
