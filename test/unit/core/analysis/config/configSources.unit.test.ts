import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { ProjectContext } from '../../../../../src/core/analysis/analyzeSource';
import { estimateSource, IncrementalEstimator } from '../../../../../src/core/estimate/incrementalEstimator';
import type { Assumption, FileEstimate } from '../../../../../src/core/estimate/fileEstimate';
import { defaultGpuProfile } from '../../../../../src/core/gpus/gpuProfiles';
import { ParsedModules } from '../../../../../src/core/project/parsedModules';
import { MemoryProjectFiles, normalizePath, type ProjectFiles } from '../../../../../src/core/project/projectFiles';
import { diskProjectFiles } from '../../../../../src/cli/diskProjectFiles';
import { realParser, REPO_ROOT } from '../../../fixtures';
import type { AssumedValue } from '../../../../../src/core/analysis/config/configSources';

const CONFIGS = path.join(REPO_ROOT, 'test', 'fixtures', 'configs');

async function estimateIn(files: ProjectFiles, root: string, entry: string, assume: Record<string, AssumedValue> = {}, scriptArguments: string[] = []): Promise<FileEstimate> {
  const parsed = new ParsedModules(await realParser());
  const file = path.join(root, entry);
  const project: ProjectContext = { source: { files, path: normalizePath(file), root: normalizePath(root) }, parse: (p, text) => parsed.parse(p, text) };
  const source = files.read(normalizePath(file))!;
  return estimateSource(entry, source, await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1, assume, scriptArguments }, project);
}

/** One of the fixture projects in test/fixtures/configs, read from the disk as the CLI reads it. */
const estimateFixture = (project: string, entry = 'train.py', assume: Record<string, AssumedValue> = {}) => estimateIn(diskProjectFiles, path.join(CONFIGS, project), entry, assume);

/** Estimates `/p/<entry>` of an in-memory project. */
const estimateMemory = (files: Record<string, string>, entry = 'train.py', assume: Record<string, AssumedValue> = {}) =>
  estimateIn(new MemoryProjectFiles(Object.entries(files).map(([name, text]) => [`/p/${name}`, text])), '/p', entry, assume);

const configOf = (estimate: FileEstimate, key: string): Assumption | undefined => estimate.models[0]?.assumptions.find((a) => (a.name === 'config' || a.name === 'dataDerived') && a.key === key);
const notesOf = (estimate: FileEstimate): string[] => [...estimate.warnings, ...estimate.models.flatMap((m) => m.notes.map((n) => n.message))];

const params = (estimate: FileEstimate): number | null => estimate.models[0]?.params ?? null;

/** CharGPT of test/fixtures/configs/yaml_gpt with these sizes, counted as PyTorch counts them. */
function charGptParams(vocab: number, block: number, layers: number, embd: number): number {
  const block1 = 2 * 2 * embd + (3 * embd * embd + 3 * embd) + (embd * embd + embd) + (embd * 4 * embd + 4 * embd) + (4 * embd * embd + embd);
  return vocab * embd + block * embd + layers * block1 + 2 * embd + embd * vocab;
}

describe('configuration the script reads', () => {
  describe('a YAML file (yaml.safe_load of the argparse --config default)', () => {
    it('builds the model from the file and names each value read with its file and line', async () => {
      const estimate = await estimateFixture('yaml_gpt');
      const model = estimate.models[0]!;
      assert.equal(model.params, charGptParams(96, 256, 6, 384));
      assert.equal(model.params, 10_819_584);
      assert.equal(model.batchSize, 48);
      assert.deepEqual(configOf(estimate, 'model.n_layer'), { name: 'config', key: 'model.n_layer', value: '6', origin: 'config file', line: 5, file: 'configs/base.yaml' });
      assert.deepEqual(configOf(estimate, 'train.batch_size'), { name: 'config', key: 'train.batch_size', value: '48', origin: 'config file', line: 11, file: 'configs/base.yaml' });
      assert.equal(configOf(estimate, 'train.lr')?.value, '0.0003');
      // Read nowhere by the script: not an assumption.
      assert.equal(configOf(estimate, 'train.grad_clip'), undefined);
    });

    it('takes the user\'s values in place of the file\'s, by key or by dotted path, and says so', async () => {
      const estimate = await estimateFixture('yaml_gpt', 'train.py', { n_layer: 12, 'train.batch_size': 96 });
      assert.equal(params(estimate), charGptParams(96, 256, 12, 384));
      assert.equal(estimate.models[0]!.batchSize, 96);
      const layers = configOf(estimate, 'model.n_layer')!;
      assert.equal(layers.value, '12');
      assert.equal(layers.origin, 'set by the user, in place of configs/base.yaml line 5');
    });

    it('reads the file again when it changes between estimates of the same document', async () => {
      const yaml = (layers: number) => `model:\n  vocab_size: 96\n  block_size: 256\n  n_layer: ${layers}\n  n_head: 8\n  n_embd: 384\ntrain:\n  batch_size: 48\n  lr: 0.001\n  max_iters: 10\n`;
      const script = readFixture('yaml_gpt/train.py');
      const files = new MemoryProjectFiles([['/p/train.py', script], ['/p/configs/base.yaml', yaml(2)]]);
      const parsed = new ParsedModules(await realParser());
      const project: ProjectContext = { source: { files, path: '/p/train.py', root: '/p' }, parse: (p, text) => parsed.parse(p, text) };
      const estimator = new IncrementalEstimator(await realParser());
      try {
        const options = { gpu: defaultGpuProfile(), safetyMargin: 0.1 };
        assert.equal(estimator.estimate('train.py', script, options, project).models[0]!.params, charGptParams(96, 256, 2, 384));
        files.set('/p/configs/base.yaml', yaml(4));
        assert.equal(estimator.estimate('train.py', script, options, project).models[0]!.params, charGptParams(96, 256, 4, 384));
        // A value the user sets runs the analysis again too.
        assert.equal(estimator.estimate('train.py', script, { ...options, assume: { n_layer: 1 } }, project).models[0]!.params, charGptParams(96, 256, 1, 384));
      } finally {
        estimator.dispose();
      }
    });
  });

  describe('environment variables with a default', () => {
    it('reads os.environ.get and os.getenv defaults through int() and float(), with their lines', async () => {
      const estimate = await estimateFixture('env_mlp');
      const model = estimate.models[0]!;
      assert.equal(model.batchSize, 1000);
      // 64 -> 512 -> 512 -> 512 -> 1
      assert.equal(model.params, 64 * 512 + 512 + 2 * (512 * 512 + 512) + 513);
      assert.deepEqual(configOf(estimate, 'BATCH_SIZE'), { name: 'config', key: 'BATCH_SIZE', value: '1000', origin: "environment variable BATCH_SIZE unset: the script's default", line: 8 });
      assert.equal(configOf(estimate, 'HIDDEN_UNITS')?.line, 9);
      assert.equal(configOf(estimate, 'LR')?.value, '1e-3');
    });

    it('takes the user\'s value for a variable, in any case', async () => {
      const estimate = await estimateFixture('env_mlp', 'train.py', { BATCH_SIZE: 64, hidden_units: 256, DEPTH: '2' });
      const model = estimate.models[0]!;
      assert.equal(model.batchSize, 64);
      assert.equal(model.params, 64 * 256 + 256 + 256 * 256 + 256 + 257);
      assert.equal(configOf(estimate, 'BATCH_SIZE')?.origin, 'environment variable BATCH_SIZE, set by the user');
    });

    it('says when a variable has no default, and leaves what depends on it unknown', async () => {
      const estimate = await estimateMemory({
        'train.py': 'import os\nimport torch.nn as nn\nimport torch\nwidth = int(os.environ["WIDTH"])\nmodel = nn.Sequential(nn.Linear(8, width), nn.ReLU(), nn.Linear(width, 1))\nx = torch.randn(32, 8)\nmodel(x).sum().backward()\n',
      });
      assert.ok(notesOf(estimate).some((n) => /Environment variable WIDTH has no default the analysis can read/.test(n)), notesOf(estimate).join('\n'));
      const set = await estimateMemory({ 'train.py': 'import os\nimport torch.nn as nn\nimport torch\nwidth = int(os.environ["WIDTH"])\nmodel = nn.Sequential(nn.Linear(8, width), nn.ReLU(), nn.Linear(width, 1))\nx = torch.randn(32, 8)\nmodel(x).sum().backward()\n' }, 'train.py', { WIDTH: 100 });
      assert.equal(params(set), 8 * 100 + 100 + 101);
    });
  });

  describe('JSON and TOML files', () => {
    it('reads json.loads(Path(...).read_text()) and passes a section as keyword arguments (**config["model"])', async () => {
      const estimate = await estimateFixture('json_cnn');
      const model = estimate.models[0]!;
      // channels (64, 128, 256) and 10 classes from the file, not the class's defaults (32, 64) and 100.
      assert.equal(model.params, 3 * 64 * 9 + 128 + 64 * 128 * 9 + 256 + 128 * 256 * 9 + 512 + 256 * 10 + 10);
      assert.equal(model.batchSize, 256);
      assert.deepEqual(configOf(estimate, 'model.channels'), { name: 'config', key: 'model.channels', value: '[64, 128, 256]', origin: 'config file', line: 8, file: 'config.json' });
      assert.equal(configOf(estimate, 'data.num_workers')?.line, 5);
    });

    it('reads tomllib.load of a file opened in binary mode, tables and all', async () => {
      const estimate = await estimateFixture('toml_lstm');
      const model = estimate.models[0]!;
      const lstm = (input: number, hidden: number) => 4 * hidden * (input + hidden) + 8 * hidden;
      assert.equal(model.params, 20_000 * 256 + lstm(256, 512) + lstm(512, 512) + 512 * 2 + 2);
      assert.equal(model.batchSize, 128);
      assert.deepEqual(configOf(estimate, 'model.vocab_size'), { name: 'config', key: 'model.vocab_size', value: '20000', origin: 'config file', line: 7, file: 'train.toml' });
    });

    it('a key the script sets itself is no longer the file\'s', async () => {
      const estimate = await estimateMemory({
        'c.json': '{"width": 16, "depth": 1}',
        'train.py': ['import json', 'import torch', 'import torch.nn as nn', 'cfg = json.load(open("c.json"))', 'cfg["width"] = 64', 'model = nn.Linear(cfg["depth"] * 8, cfg["width"])', 'x = torch.randn(4, 8)', 'model(x).sum().backward()', ''].join('\n'),
      });
      assert.equal(params(estimate), 8 * 64 + 64);
      assert.equal(configOf(estimate, 'width'), undefined);
      assert.equal(configOf(estimate, 'depth')?.line, 1);
    });

    it('reads OmegaConf.load with its keys as attributes', async () => {
      const estimate = await estimateMemory({
        'conf/config.yaml': 'model:\n  d_in: 32\n  hidden: 128\ntrainer:\n  batch_size: 512\n',
        'train.py': [
          'import torch',
          'import torch.nn as nn',
          'from omegaconf import OmegaConf',
          'cfg = OmegaConf.load("conf/config.yaml")',
          'model = nn.Sequential(nn.Linear(cfg.model.d_in, cfg.model.hidden), nn.ReLU(), nn.Linear(cfg.model.hidden, 2))',
          'loader = torch.utils.data.DataLoader(range(10), batch_size=cfg.trainer.batch_size)',
          'x = torch.randn(4, cfg.model.d_in)',
          'model(x).sum().backward()',
          '',
        ].join('\n'),
      });
      assert.equal(params(estimate), 32 * 128 + 128 + 128 * 2 + 2);
      assert.equal(estimate.models[0]!.batchSize, 512);
      assert.deepEqual(configOf(estimate, 'trainer.batch_size'), { name: 'config', key: 'trainer.batch_size', value: '512', origin: 'config file', line: 5, file: 'conf/config.yaml' });
    });
  });

  describe('Hydra (@hydra.main with a defaults list)', () => {
    /** ViT of test/fixtures/configs/hydra_vit, counted as PyTorch counts it (TransformerEncoderLayer: attention, two linears, two norms). */
    const vitParams = (dim: number, depth: number, classes: number, patch = 8, image = 64) => {
      const layer = 3 * dim * dim + 3 * dim + dim * dim + dim + dim * 4 * dim + 4 * dim + 4 * dim * dim + dim + 4 * dim;
      return 3 * dim * patch * patch + dim + (image / patch) ** 2 * dim + depth * layer + 2 * dim + dim * classes + classes;
    };

    it('composes conf/config.yaml with the group files its defaults list names, its own keys winning', async () => {
      const estimate = await estimateFixture('hydra_vit');
      const model = estimate.models[0]!;
      assert.equal(model.params, vitParams(384, 6, 200));
      // trainer.batch_size is 128 in config.yaml, over 64 in trainer/single_gpu.yaml.
      assert.equal(model.batchSize, 128);
      assert.deepEqual(configOf(estimate, 'trainer.batch_size'), { name: 'config', key: 'trainer.batch_size', value: '128', origin: 'config file', line: 9, file: 'conf/config.yaml' });
      assert.deepEqual(configOf(estimate, 'trainer.lr'), { name: 'config', key: 'trainer.lr', value: '0.0005', origin: 'config file', line: 2, file: 'conf/trainer/single_gpu.yaml' });
      assert.deepEqual(configOf(estimate, 'model.depth'), { name: 'config', key: 'model.depth', value: '6', origin: 'config file', line: 4, file: 'conf/model/vit_small.yaml' });
    });

    it('takes the user\'s values over the group\'s', async () => {
      const estimate = await estimateFixture('hydra_vit', 'train.py', { 'model.depth': 2, dim: 192, heads: 3 });
      assert.equal(params(estimate), vitParams(192, 2, 200));
      assert.equal(configOf(estimate, 'model.depth')?.origin, 'set by the user, in place of conf/model/vit_small.yaml line 4');
    });

    it('names a defaults entry it does not read, and a missing group file', async () => {
      const estimate = await estimateMemory({
        'conf/config.yaml': 'defaults:\n  - encoder: [small, large]\n  - head: missing\nwidth: 32\n',
        'train.py': ['import hydra', 'import torch', 'import torch.nn as nn', '@hydra.main(config_path="conf", config_name="config")', 'def main(cfg):', '    model = nn.Linear(cfg.width, 2)', '    x = torch.randn(8, cfg.width)', '    model(x).sum().backward()', ''].join('\n'),
      });
      assert.equal(params(estimate), 32 * 2 + 2);
      const notes = notesOf(estimate).join('\n');
      assert.match(notes, /Hydra defaults entry .* is not read \(only `group: option`, `optional`\/`override group: option`, `group@package: option` and `_self_` are\)/);
      assert.match(notes, /Configuration file conf\/head\/missing\.yaml not found/);
    });
  });

  describe('Hydra composition as projects write it (lightning-hydra-template)', () => {
    /** `main(cfg)` under @hydra.main hands its configuration to `train(cfg)`, defined above it. */
    const script = [
      'import hydra',
      'import torch',
      'import torch.nn as nn',
      '',
      'def train(cfg):',
      '    model = nn.Linear(cfg.model.d_in, cfg.model.d_out)',
      '    opt = torch.optim.SGD(model.parameters(), lr=0.1)',
      '    x = torch.randn(cfg.data.batch_size, cfg.model.d_in)',
      '    model(x).sum().backward()',
      '',
      '@hydra.main(version_base="1.3", config_path="configs", config_name="train.yaml")',
      'def main(cfg):',
      '    train(cfg)',
      '',
      'if __name__ == "__main__":',
      '    main()',
      '',
    ].join('\n');
    const files = {
      'train.py': script,
      'configs/train.yaml': 'defaults:\n  - _self_\n  - model: small\n  - data: default\n  - experiment: null\n  - optional local: default\nmodel:\n  d_out: 99\n',
      'configs/model/small.yaml': 'd_in: 16\nd_out: 4\n',
      'configs/model/wide.yaml': 'defaults:\n  - small\nd_in: 64\n',
      'configs/data/default.yaml': 'batch_size: 32\n',
      'configs/experiment/big.yaml': '# @package _global_\ndefaults:\n  - override /model: wide\ndata:\n  batch_size: 128\n',
    };

    it('runs a function the hydra main calls with the configuration; entries after _self_ win; null and a missing optional file select nothing', async () => {
      const estimate = await estimateMemory(files);
      assert.equal(params(estimate), 16 * 4 + 4, notesOf(estimate).join('\n'));
      assert.equal(estimate.models[0]!.batchSize, 32);
      assert.ok(!notesOf(estimate).some((n) => /Hydra defaults entry|not found|not one the analysis read/.test(n)), notesOf(estimate).join('\n'));
    });

    it('takes the command line\'s group selections and values: a global experiment, a group file\'s own defaults, dotted keys', async () => {
      const experiment = await estimateIn(new MemoryProjectFiles(Object.entries(files).map(([name, text]) => [`/p/${name}`, text])), '/p', 'train.py', {}, ['experiment=big']);
      assert.equal(params(experiment), 64 * 4 + 4, notesOf(experiment).join('\n'));
      assert.equal(experiment.models[0]!.batchSize, 128);
      const values = await estimateIn(new MemoryProjectFiles(Object.entries(files).map(([name, text]) => [`/p/${name}`, text])), '/p', 'train.py', {}, ['model=wide', 'model.d_out=3', 'data.batch_size=8']);
      assert.equal(params(values), 64 * 3 + 3, notesOf(values).join('\n'));
      assert.equal(values.models[0]!.batchSize, 8);
    });

    it('resolves OmegaConf interpolations (${a.b}, chains, text with parts); resolvers, relative and missing keys do not stop it', async () => {
      const estimate = await estimateMemory({
        ...files,
        'configs/model/small.yaml': 'd_in: ${data.features}\nd_out: ${model.classes}\nclasses: ${data.n}\nname: run_${data.n}_${oc.env:USER}\nother: ${no.such.key}\n',
        'configs/data/default.yaml': 'features: 24\nn: 6\nbatch_size: ${.features}\n',
        'train.py': script.replace('cfg.data.batch_size', '12'),
      });
      assert.equal(params(estimate), 24 * 6 + 6, notesOf(estimate).join('\n'));
      const omega = await estimateMemory({
        'c.yaml': 'width: 8\nmodel:\n  d_in: ${width}\n',
        'train.py': ['import torch', 'import torch.nn as nn', 'from omegaconf import OmegaConf', 'cfg = OmegaConf.load("c.yaml")', 'model = nn.Linear(cfg.model.d_in, 2)', 'model(torch.randn(4, 8)).sum().backward()', ''].join('\n'),
      });
      assert.equal(params(omega), 8 * 2 + 2, notesOf(omega).join('\n'));
    });

    it('merges OmegaConf configurations, the command line\'s key=value words (from_cli) last', async () => {
      const files = {
        'c.yaml': 'width: 8\nmodel:\n  d_in: ${width}\n  d_out: 2\n',
        'train.py': ['import torch', 'import torch.nn as nn', 'from omegaconf import OmegaConf', 'cfg = OmegaConf.merge(OmegaConf.load("c.yaml"), OmegaConf.create({"model": {"d_out": 3}}), OmegaConf.from_cli())', 'model = nn.Linear(cfg.model.d_in, cfg.model.d_out)', 'model(torch.randn(4, cfg.model.d_in)).sum().backward()', ''].join('\n'),
      };
      const merged = await estimateMemory(files);
      assert.equal(params(merged), 8 * 3 + 3, notesOf(merged).join('\n'));
      assert.deepEqual(configOf(merged, 'model.d_in')?.file, 'c.yaml');
      const fromCli = await estimateIn(new MemoryProjectFiles(Object.entries(files).map(([name, text]) => [`/p/${name}`, text])), '/p', 'train.py', {}, ['width=5', 'model.d_in=12']);
      assert.equal(params(fromCli), 12 * 3 + 3, notesOf(fromCli).join('\n'));
    });

    it('puts a group under the package its entry names', async () => {
      const estimate = await estimateMemory({ ...files, 'configs/train.yaml': 'defaults:\n  - encoders@model: narrow\n  - data: default\n', 'configs/encoders/narrow.yaml': 'd_in: 8\nd_out: 2\n' });
      assert.equal(params(estimate), 8 * 2 + 2, notesOf(estimate).join('\n'));
    });
  });

  describe('argparse reading the command line the script is run with', () => {
    const script = [
      'import argparse',
      'import yaml',
      'import torch',
      'import torch.nn as nn',
      'parser = argparse.ArgumentParser()',
      'parser.add_argument("data", nargs="?", default="cifar10")',
      'parser.add_argument("--config-file", default="small.yaml")',
      'parser.add_argument("-b", "--batch-size", type=int, default=32)',
      'parser.add_argument("--dims", type=int, nargs="+", default=[8, 4])',
      'parser.add_argument("--amp", action="store_true")',
      'parser.add_argument("--verbose", "-v", action="count", default=0)',
      'args = parser.parse_args()',
      'cfg = yaml.safe_load(open(args.config_file))',
      'model = nn.Sequential(nn.Linear(cfg["d_in"], args.dims[0]), nn.Linear(args.dims[0], args.dims[1]))',
      'opt = torch.optim.SGD(model.parameters(), lr=0.1)',
      'with torch.autocast("cuda", enabled=args.amp):',
      '    loss = model(torch.randn(args.batch_size, cfg["d_in"])).sum()',
      'loss.backward()',
      '',
    ].join('\n');
    const files = { 'train.py': script, 'small.yaml': 'd_in: 16\n', 'large.yaml': 'd_in: 64\n' };
    const run = (words: string[], assume: Record<string, AssumedValue> = {}) => estimateIn(new MemoryProjectFiles(Object.entries(files).map(([name, text]) => [`/p/${name}`, text])), '/p', 'train.py', assume, words);

    it('keeps the defaults without words', async () => {
      const estimate = await run([]);
      assert.equal(params(estimate), 16 * 8 + 8 + 8 * 4 + 4);
      assert.equal(estimate.models[0]!.batchSize, 32);
      assert.equal(estimate.models[0]!.precision, 'fp32');
    });

    it('sets what the words give, by type, nargs and action, and names the command line as their origin', async () => {
      const estimate = await run(['imagenet', '--config-file', 'large.yaml', '-b', '128', '--dims', '32', '2', '--amp', '-v', '--unknown=1']);
      assert.equal(params(estimate), 64 * 32 + 32 + 32 * 2 + 2, notesOf(estimate).join('\n'));
      assert.equal(estimate.models[0]!.batchSize, 128);
      assert.equal(estimate.models[0]!.precision, 'fp16-mixed');
      const origins = estimate.models[0]!.assumptions.filter((a) => a.name === 'config').map((a) => `${a.key}=${a.value}: ${a.origin}`);
      assert.ok(origins.includes('batch_size=128: the command line (--batch-size)'), origins.join('\n'));
      const inline = await run(['--batch-size=96', '--config-file=large.yaml']);
      assert.equal(inline.models[0]!.batchSize, 96);
      assert.equal(params(inline), 64 * 8 + 8 + 8 * 4 + 4);
    });

    it('lets the user\'s --set win over the command line', async () => {
      const estimate = await run(['--batch-size', '128'], { batch_size: 7 });
      assert.equal(estimate.models[0]!.batchSize, 7);
    });
  });

  describe('bad configuration files: a note and a safe result, never an exception', () => {
    const script = (file: string) =>
      ['import yaml', 'import torch', 'import torch.nn as nn', `with open("${file}") as f:`, '    cfg = yaml.safe_load(f)', 'model = nn.Linear(cfg["d_in"], 4)', 'x = torch.randn(8, 16)', 'model(x).sum().backward()', ''].join('\n');

    it('a missing file', async () => {
      const estimate = await estimateMemory({ 'train.py': script('missing.yaml') });
      assert.ok(notesOf(estimate).some((n) => /Configuration file missing\.yaml not found/.test(n)), notesOf(estimate).join('\n'));
    });

    it('a malformed YAML file: the lines it cannot read are named, the rest is read', async () => {
      const estimate = await estimateMemory({ 'train.py': script('c.yaml'), 'c.yaml': 'd_in: 16\nbase: !!python/object:Foo\n  x: 1\n' });
      assert.ok(notesOf(estimate).some((n) => /Configuration c\.yaml: line 2: YAML aliases and tags are not read/.test(n)), notesOf(estimate).join('\n'));
      assert.equal(params(estimate), 16 * 4 + 4);
    });

    it('a malformed JSON file and a file too large to read', async () => {
      const json = await estimateMemory({ 'train.py': script('c.json').replace('yaml.safe_load', 'json.load').replace('import yaml', 'import json'), 'c.json': '{"d_in": 16,,}' });
      assert.ok(notesOf(json).some((n) => /Configuration c\.json: not valid JSON \(line 1: expected a "key"\)/.test(n)), notesOf(json).join('\n'));
      const huge = await estimateMemory({ 'train.py': script('c.yaml'), 'c.yaml': `d_in: 16\n${'x: 1\n'.repeat(60_000)}` });
      assert.ok(notesOf(huge).some((n) => /Configuration c\.yaml: the file is larger than 256 KiB; it is not read/.test(n)), notesOf(huge).join('\n'));
    });

    it('a file outside the project root is not read', async () => {
      const estimate = await estimateMemory({ 'train.py': script('../../etc/c.yaml') });
      assert.ok(notesOf(estimate).some((n) => /outside the project root/.test(n)), notesOf(estimate).join('\n'));
    });
  });

  describe('values the script writes itself, replaced by the user\'s', () => {
    const NANO = [
      'import torch',
      'import torch.nn as nn',
      'from dataclasses import dataclass',
      'batch_size = 12',
      'n_layer = 4',
      '@dataclass',
      'class Config:',
      '    width: int = 64',
      '    depth: int = 2',
      'def build(cfg):',
      '    layers = [nn.Linear(16, cfg.width)]',
      '    for _ in range(cfg.depth):',
      '        layers += [nn.ReLU(), nn.Linear(cfg.width, cfg.width)]',
      '    return nn.Sequential(*layers)',
      'model = build(Config(depth=n_layer))',
      'x = torch.randn(batch_size, 16)',
      'model(x).sum().backward()',
      '',
    ].join('\n');

    it('top-level constants (nanoGPT\'s style) and dataclass field defaults', async () => {
      const plain = await estimateMemory({ 'train.py': NANO });
      assert.equal(plain.models[0]!.batchSize, 12);
      assert.equal(params(plain), 16 * 64 + 64 + 4 * (64 * 64 + 64));
      assert.equal(plain.models[0]!.assumptions.filter((a) => a.name === 'config').length, 0);
      const set = await estimateMemory({ 'train.py': NANO }, 'train.py', { batch_size: 32, n_layer: 1, width: 10 });
      assert.equal(set.models[0]!.batchSize, 32);
      assert.equal(params(set), 16 * 10 + 10 + 10 * 10 + 10);
      assert.equal(configOf(set, 'batch_size')?.origin, 'set by the user, in place of constant batch_size = 12');
      assert.equal(configOf(set, 'width')?.origin, 'set by the user, in place of the Config.width default 64');
    });

    it('exec(open(...).read()) of a configuration file (nanoGPT\'s config/train_*.py), and its configurator.py', async () => {
      const train = (exec: string) =>
        [
          'import torch',
          'import torch.nn as nn',
          'batch_size = 12',
          'n_layer = 4',
          'n_embd = 64',
          exec,
          'model = nn.Sequential(*[nn.Linear(n_embd, n_embd) for _ in range(n_layer)])',
          'x = torch.randn(batch_size, n_embd)',
          'model(x).sum().backward()',
          '',
        ].join('\n');
      const files = {
        'config/train_small.py': '# a smaller model for a laptop\nn_layer = 2\nn_embd = 32\nbatch_size = 8\n',
        'configurator.py': ['import sys', 'from ast import literal_eval', 'for arg in sys.argv[1:]:', "    if '=' not in arg:", '        exec(open(arg).read())', '    else:', "        key, val = arg[2:].split('=')", '        globals()[key] = literal_eval(val)', ''].join('\n'),
      };
      const small = await estimateMemory({ ...files, 'train.py': train('exec(open("config/train_small.py").read())') });
      assert.equal(params(small), 2 * (32 * 32 + 32));
      assert.equal(small.models[0]!.batchSize, 8);
      assert.deepEqual(configOf(small, 'n_embd'), { name: 'config', key: 'n_embd', value: '32', origin: 'config file', line: 3, file: 'config/train_small.py' });
      const pinned = await estimateMemory({ ...files, 'train.py': train('exec(open("config/train_small.py").read())') }, 'train.py', { n_layer: 3 });
      assert.equal(params(pinned), 3 * (32 * 32 + 32));
      // Both places that set it are named: the script's constant and the file exec'd after it.
      assert.deepEqual(
        pinned.models[0]!.assumptions.filter((a) => a.key === 'n_layer').map((a) => a.origin),
        ['set by the user, in place of constant n_layer = 4', 'set by the user, in place of config/train_small.py line 2'],
      );
      // configurator.py takes its overrides from the command line: the script's own values, and a note saying how to set others.
      const configurator = await estimateMemory({ ...files, 'train.py': train("exec(open('configurator.py').read())") });
      assert.equal(params(configurator), 4 * (64 * 64 + 64));
      assert.ok(notesOf(configurator).some((n) => /configurator\.py reads its overrides from the command line .* set them with --set key=value/.test(n)), notesOf(configurator).join('\n'));
    });

    it('argparse defaults', async () => {
      const estimate = await estimateFixture('word_lm', 'main.py', { nhid: 200, batch_size: 8, ntokens: 1000 });
      const model = estimate.models[0]!;
      assert.equal(model.batchSize, 8);
      const lstm = (input: number, hidden: number) => 4 * hidden * (input + hidden) + 8 * hidden;
      assert.equal(model.params, 1000 * 650 + lstm(650, 200) + lstm(200, 200) + 200 * 1000 + 1000);
      assert.equal(configOf(estimate, 'nhid')?.origin, 'set by the user, in place of the --nhid default 650');
    });
  });

  describe('sizes that come from the data', () => {
    it('a vocabulary read from the corpus is a named assumption, not a silent guess', async () => {
      const estimate = await estimateFixture('word_lm', 'main.py');
      const model = estimate.models[0]!;
      const lstm = (input: number, hidden: number) => 4 * hidden * (input + hidden) + 8 * hidden;
      assert.equal(model.params, 50_257 * 650 + lstm(650, 650) + lstm(650, 650) + 650 * 50_257 + 50_257);
      const vocabulary = configOf(estimate, 'ntokens')!;
      assert.equal(vocabulary.name, 'dataDerived');
      assert.equal(vocabulary.what, 'vocabulary size');
      assert.equal(vocabulary.line, 31);
      assert.match(vocabulary.origin, /from the data \(len\(corpus\.dictionary\)\); assumed as GPT-2's BPE vocabulary: pin it with --set ntokens=N/);
    });

    it('pinned by its own name or by vocab_size', async () => {
      for (const assume of [{ ntokens: 33_278 }, { vocab_size: 33_278 }] as Record<string, AssumedValue>[]) {
        const estimate = await estimateFixture('word_lm', 'main.py', assume);
        const lstm = (input: number, hidden: number) => 4 * hidden * (input + hidden) + 8 * hidden;
        assert.equal(params(estimate), 33_278 * 650 + 2 * lstm(650, 650) + 650 * 33_278 + 33_278);
        assert.equal(configOf(estimate, 'ntokens')?.value, '33278');
      }
    });

    it('a class count read from the dataset, and nothing assumed for other lengths', async () => {
      const estimate = await estimateMemory({
        'train.py': [
          'import torch',
          'import torch.nn as nn',
          'import torchvision',
          'train_set = torchvision.datasets.ImageFolder("data/train")',
          'num_classes = len(train_set.classes)',
          'loader = torch.utils.data.DataLoader(train_set, batch_size=64)',
          'steps = len(loader)',
          'model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, num_classes))',
          'x = torch.randn(64, 3, 32, 32)',
          'model(x).sum().backward()',
          '',
        ].join('\n'),
      });
      assert.equal(params(estimate), 3 * 32 * 32 * 1000 + 1000);
      const classes = configOf(estimate, 'num_classes')!;
      assert.equal(classes.what, 'number of classes');
      assert.match(classes.origin, /assumed as ImageNet's classes: pin it with --set num_classes=N/);
      assert.equal(configOf(estimate, 'steps'), undefined);
    });
  });

  describe('dict-driven calls', () => {
    it('a dict built from defaults and overrides ({**a, **b}) overrides the function\'s defaults', async () => {
      const estimate = await estimateMemory({
        'train.py': [
          'import torch',
          'import torch.nn as nn',
          'def make_mlp(d_in=8, hidden=32, d_out=1):',
          '    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, d_out))',
          'defaults = {"d_in": 8, "hidden": 32}',
          'overrides = dict(hidden=300)',
          'model = make_mlp(**{**defaults, **overrides})',
          'x = torch.randn(16, 8)',
          'model(x).sum().backward()',
          '',
        ].join('\n'),
      });
      assert.equal(params(estimate), 8 * 300 + 300 + 300 + 1);
    });

    it('a script function the module body calls with a config dict is read with the dict\'s values, not its defaults', async () => {
      const estimate = await estimateMemory({
        'train.py': [
          'import torch',
          'import torch.nn as nn',
          'from torch.utils.data import DataLoader, TensorDataset',
          '',
          'def main(batch_size=32, hidden=64, depth=1):',
          '    layers = [nn.Linear(20, hidden), nn.ReLU()]',
          '    for _ in range(depth):',
          '        layers += [nn.Linear(hidden, hidden), nn.ReLU()]',
          '    model = nn.Sequential(*layers, nn.Linear(hidden, 1)).cuda()',
          '    loader = DataLoader(TensorDataset(torch.randn(1000, 20), torch.randn(1000, 1)), batch_size=batch_size)',
          '    optimizer = torch.optim.Adam(model.parameters())',
          '    for x, y in loader:',
          '        loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())',
          '        loss.backward()',
          '        optimizer.step()',
          '',
          'CONFIG = {"batch_size": 256, "hidden": 512, "depth": 2}',
          '',
          'if __name__ == "__main__":',
          '    main(**CONFIG)',
          '',
        ].join('\n'),
      });
      assert.equal(params(estimate), 20 * 512 + 512 + 2 * (512 * 512 + 512) + 513);
      assert.equal(estimate.models[0]!.batchSize, 256);
    });

    it('an unknown dict passed as **kwargs is a note: the defaults stand in for it', async () => {
      const estimate = await estimateMemory({
        'train.py': ['import torch', 'import torch.nn as nn', 'import pickle', 'def make(hidden=32):', '    return nn.Sequential(nn.Linear(8, hidden), nn.Linear(hidden, 1))', 'cfg = pickle.load(open("cfg.pkl", "rb"))', 'model = make(**cfg)', 'x = torch.randn(4, 8)', 'model(x).sum().backward()', ''].join('\n'),
      });
      assert.ok(notesOf(estimate).some((n) => /`\*\*cfg` is not a dict the analysis knows: make is read with its own defaults/.test(n)), notesOf(estimate).join('\n'));
    });
  });
});

function readFixture(name: string): string {
  return diskProjectFiles.read(path.join(CONFIGS, name))!;
}
