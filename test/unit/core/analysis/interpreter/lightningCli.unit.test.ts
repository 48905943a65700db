import * as assert from 'node:assert/strict';
import type { ProjectContext } from '../../../../../src/core/analysis/analyzeSource';
import { estimateSource } from '../../../../../src/core/estimate/incrementalEstimator';
import type { FileEstimate } from '../../../../../src/core/estimate/fileEstimate';
import { defaultGpuProfile } from '../../../../../src/core/gpus/gpuProfiles';
import { ParsedModules } from '../../../../../src/core/project/parsedModules';
import { MemoryProjectFiles } from '../../../../../src/core/project/projectFiles';
import { realParser } from '../../../fixtures';

/** Estimates `/p/main.py` of an in-memory project, run with these arguments. */
async function estimate(files: Record<string, string>, scriptArguments: string[] = []): Promise<FileEstimate> {
  const parser = await realParser();
  const parsed = new ParsedModules(parser);
  const project: ProjectContext = { source: { files: new MemoryProjectFiles(Object.entries(files).map(([name, text]) => [`/p/${name}`, text])), path: '/p/main.py', root: '/p' }, parse: (p, text) => parsed.parse(p, text) };
  return estimateSource('main.py', files['main.py']!, parser, { gpu: defaultGpuProfile(), safetyMargin: 0.1, scriptArguments }, project);
}

const notesOf = (e: FileEstimate): string[] => [...e.warnings, ...e.models.flatMap((m) => m.notes.map((n) => n.message))];

const LIT = [
  'import torch',
  'import torch.nn as nn',
  'from lightning.pytorch import LightningModule, LightningDataModule',
  'from torch.utils.data import DataLoader',
  '',
  'class Net(LightningModule):',
  '    def __init__(self, d_in: int = 16, hidden: int = 8):',
  '        super().__init__()',
  '        self.body = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, 2))',
  '    def forward(self, x):',
  '        return self.body(x)',
  '    def configure_optimizers(self):',
  '        return torch.optim.SGD(self.parameters(), lr=0.1)',
  '',
  'class Data(LightningDataModule):',
  '    def __init__(self, batch_size: int = 4):',
  '        super().__init__()',
  '        self.batch_size = batch_size',
  '    def train_dataloader(self):',
  '        return DataLoader(self.dataset, batch_size=self.batch_size)',
  '',
].join('\n');

const netParams = (dIn: number, hidden: number) => dIn * hidden + hidden + hidden * 2 + 2;

describe('LightningCLI', () => {
  const main = ['from lightning.pytorch.cli import LightningCLI', 'from lit import Net, Data', '', 'def cli_main():', '    LightningCLI(Net, Data)', '', 'if __name__ == "__main__":', '    cli_main()', ''].join('\n');

  it('builds the model, data module and trainer from the --config file\'s sections, and names the model `model`', async () => {
    const e = await estimate({ 'main.py': main, 'lit.py': LIT, 'configs/c.yaml': 'trainer:\n  precision: bf16-mixed\nmodel:\n  hidden: 32\ndata:\n  batch_size: 64\n' }, ['fit', '--config', 'configs/c.yaml']);
    assert.equal(e.models.length, 1, notesOf(e).join('\n'));
    const model = e.models[0]!;
    assert.equal(model.name, 'model');
    assert.equal(model.params, netParams(16, 32));
    assert.equal(model.batchSize, 64);
    assert.equal(model.precision, 'bf16-mixed');
    assert.equal(model.optimizer, 'sgd');
  });

  it('lets a later --config file and --section.key options win over earlier files', async () => {
    const e = await estimate(
      { 'main.py': main, 'lit.py': LIT, 'a.yaml': 'model:\n  d_in: 10\n  hidden: 32\ndata:\n  batch_size: 64\n', 'b.yaml': 'model:\n  hidden: 20\n' },
      ['fit', '--config', 'a.yaml', '-c=b.yaml', '--data.batch_size', '128', '--model.d_in=12'],
    );
    assert.equal(e.models[0]?.params, netParams(12, 20), notesOf(e).join('\n'));
    assert.equal(e.models[0]?.batchSize, 128);
  });

  it('builds the class a section names with class_path and init_args, and reads parser_kwargs\' default_config_files', async () => {
    const script = ['from lightning.pytorch.cli import LightningCLI', '', 'cli = LightningCLI(subclass_mode_model=True, parser_kwargs={"fit": {"default_config_files": ["defaults.yaml"]}}, run=False)', 'cli.trainer.fit(cli.model, datamodule=cli.datamodule)', ''].join('\n');
    const e = await estimate(
      { 'main.py': script, 'lit.py': LIT, 'defaults.yaml': 'model:\n  class_path: lit.Net\n  init_args:\n    hidden: 24\ndata:\n  class_path: lit.Data\n  init_args:\n    batch_size: 16\n' },
      ['fit'],
    );
    assert.equal(e.models[0]?.params, netParams(16, 24), notesOf(e).join('\n'));
    assert.equal(e.models[0]?.batchSize, 16);
  });

  it('follows a subclass of LightningCLI, and makes the optimizer its optimizer section names for a model without configure_optimizers()', async () => {
    const lit = LIT.replace(/ {4}def configure_optimizers\(self\):\n {8}return torch\.optim\.SGD\(self\.parameters\(\), lr=0\.1\)\n/, '');
    const script = ['from lightning.pytorch.cli import LightningCLI', 'from lit import Net, Data', '', 'class MyCLI(LightningCLI):', '    def add_arguments_to_parser(self, parser):', '        parser.link_arguments("data.batch_size", "model.hidden")', '', 'MyCLI(Net, Data)', ''].join('\n');
    const config = 'model:\n  hidden: 12\noptimizer:\n  class_path: torch.optim.RMSprop\n  init_args:\n    lr: 0.01\n';
    const fromFile = await estimate({ 'main.py': script, 'lit.py': lit, 'c.yaml': config }, ['fit', '--config', 'c.yaml']);
    assert.equal(fromFile.models[0]?.params, netParams(16, 12), notesOf(fromFile).join('\n'));
    assert.equal(fromFile.models[0]?.optimizer, 'rmsprop');
    const fromOption = await estimate({ 'main.py': script, 'lit.py': lit }, ['fit', '--optimizer', 'SGD', '--optimizer.momentum', '0.9']);
    assert.equal(fromOption.models[0]?.optimizer, 'sgd-momentum', notesOf(fromOption).join('\n'));
  });

  it('applies a subclass\'s parser additions: set_defaults under the configuration, links on parse and on instantiate', async () => {
    const lit = LIT.replace('        self.batch_size = batch_size\n', '        self.batch_size = batch_size\n        self.num_features = 10\n');
    const script = [
      'from lightning.pytorch.cli import LightningCLI',
      'from lit import Net, Data',
      '',
      'class MyCLI(LightningCLI):',
      '    def add_arguments_to_parser(self, parser):',
      '        parser.set_defaults({"model.hidden": 6, "data.batch_size": 12})',
      '        parser.link_arguments("data.num_features", "model.d_in", apply_on="instantiate")',
      '',
      'MyCLI(Net, Data)',
      '',
    ].join('\n');
    const defaults = await estimate({ 'main.py': script, 'lit.py': lit }, ['fit']);
    assert.equal(defaults.models[0]?.params, netParams(10, 6), notesOf(defaults).join('\n'));
    assert.equal(defaults.models[0]?.batchSize, 12);
    const configured = await estimate({ 'main.py': script, 'lit.py': lit, 'c.yaml': 'model:\n  hidden: 20\n' }, ['fit', '-c', 'c.yaml']);
    assert.equal(configured.models[0]?.params, netParams(10, 20), notesOf(configured).join('\n'));
    const onParse = await estimate({ 'main.py': script.replace(', apply_on="instantiate"', '').replace('"data.num_features"', '"data.batch_size"'), 'lit.py': lit }, ['fit']);
    assert.equal(onParse.models[0]?.params, netParams(12, 6), notesOf(onParse).join('\n'));
  });

  it('uses the classes\' defaults when run without arguments, and says so', async () => {
    const e = await estimate({ 'main.py': main, 'lit.py': LIT });
    assert.equal(e.models[0]?.params, netParams(16, 8));
    assert.equal(e.models[0]?.batchSize, 4);
    assert.ok(notesOf(e).some((n) => /LightningCLI is run without arguments here/.test(n)), notesOf(e).join('\n'));
  });

  it('says so, without failing, when no model class is given or named', async () => {
    const e = await estimate({ 'main.py': 'from lightning.pytorch.cli import LightningCLI\nLightningCLI()\n', 'c.yaml': 'model:\n  hidden: 3\n' }, ['fit', '--config', 'c.yaml', '--config']);
    assert.equal(e.models.length, 0);
    assert.ok(notesOf(e).some((n) => /LightningCLI is given no model class/.test(n)), notesOf(e).join('\n'));
  });
});
