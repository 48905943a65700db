import * as assert from 'node:assert/strict';
import type { ProjectContext } from '../../../../../src/core/analysis/analyzeSource';
import { estimateSource } from '../../../../../src/core/estimate/incrementalEstimator';
import type { FileEstimate } from '../../../../../src/core/estimate/fileEstimate';
import { defaultGpuProfile } from '../../../../../src/core/gpus/gpuProfiles';
import { ParsedModules } from '../../../../../src/core/project/parsedModules';
import { MemoryProjectFiles } from '../../../../../src/core/project/projectFiles';
import { realParser } from '../../../fixtures';

/** Estimates `/p/train.py` of an in-memory project. */
async function estimate(files: Record<string, string>): Promise<FileEstimate> {
  const parser = await realParser();
  const parsed = new ParsedModules(parser);
  const project: ProjectContext = { source: { files: new MemoryProjectFiles(Object.entries(files).map(([name, text]) => [`/p/${name}`, text])), path: '/p/train.py', root: '/p' }, parse: (p, text) => parsed.parse(p, text) };
  return estimateSource('train.py', files['train.py']!, parser, { gpu: defaultGpuProfile(), safetyMargin: 0.1 }, project);
}

const notesOf = (e: FileEstimate): string[] => [...e.warnings, ...e.models.flatMap((m) => m.notes.map((n) => n.message))];

/** A script that builds `model` with Hydra from conf/config.yaml and trains it on (8, 16) inputs. */
const hydraScript = (build: string) =>
  ['import hydra', 'import torch', 'from hydra.utils import instantiate', '', '@hydra.main(version_base=None, config_path="conf", config_name="config")', 'def main(cfg):', `    model = ${build}`, '    opt = torch.optim.SGD(model.parameters(), lr=0.1)', '    x = torch.randn(cfg.batch_size, 16)', '    model(x).sum().backward()', '    opt.step()', '', 'if __name__ == "__main__":', '    main()', ''].join('\n');

const NET = ['import torch.nn as nn', '', 'class Net(nn.Module):', '    def __init__(self, d_in, hidden, d_out=2, head=None):', '        super().__init__()', '        self.body = nn.Linear(d_in, hidden)', '        self.head = head if head is not None else nn.Linear(hidden, d_out)', '    def forward(self, x):', '        return self.head(self.body(x))', ''].join('\n');

describe('Hydra instantiate (_target_)', () => {
  it('builds the project class its defaults-list group names, with the mapping\'s keys as arguments', async () => {
    const e = await estimate({
      'conf/config.yaml': 'defaults:\n  - model: small\n  - _self_\nbatch_size: 32\n',
      'conf/model/small.yaml': '_target_: models.net.Net\nd_in: 16\nhidden: 64\n',
      'models/__init__.py': '',
      'models/net.py': NET,
      'train.py': hydraScript('instantiate(cfg.model).cuda()'),
    });
    assert.equal(e.models.length, 1, notesOf(e).join('\n'));
    assert.equal(e.models[0]!.params, 16 * 64 + 64 + 64 * 2 + 2);
    assert.equal(e.models[0]!.batchSize, 32);
  });

  it('merges the call\'s keyword arguments over the mapping and builds nested targets first', async () => {
    const e = await estimate({
      'conf/config.yaml': 'batch_size: 8\nmodel:\n  _target_: net.Net\n  d_in: 16\n  hidden: 64\n  head:\n    _target_: torch.nn.Linear\n    in_features: 64\n    out_features: 5\n',
      'net.py': NET,
      'train.py': hydraScript('instantiate(cfg.model, hidden=32, head={"_target_": "torch.nn.Linear", "in_features": 32, "out_features": 3})'),
    });
    assert.equal(e.models[0]?.params, 16 * 32 + 32 + 32 * 3 + 3, notesOf(e).join('\n'));
  });

  it('gives a partial for `_partial_: true`, called later with the rest of the arguments', async () => {
    const e = await estimate({
      'conf/config.yaml': 'batch_size: 8\nmodel:\n  _target_: net.Net\n  _partial_: true\n  hidden: 10\n',
      'net.py': NET,
      'train.py': hydraScript('instantiate(cfg.model)(16)'),
    });
    assert.equal(e.models[0]?.params, 16 * 10 + 10 + 10 * 2 + 2, notesOf(e).join('\n'));
  });

  it('passes `_args_` positionally to a library target', async () => {
    const e = await estimate({
      'conf/config.yaml': 'batch_size: 8\nmodel:\n  _target_: torch.nn.Linear\n  _args_: [16, 4]\n',
      'train.py': hydraScript('hydra.utils.instantiate(cfg.model)'),
    });
    assert.equal(e.models[0]?.params, 16 * 4 + 4, notesOf(e).join('\n'));
  });

  it('reads the compose API: initialize(config_path=...) then compose(config_name, overrides)', async () => {
    const script = [
      'import torch',
      'from hydra import compose, initialize',
      'from hydra.utils import instantiate',
      '',
      'with initialize(version_base=None, config_path="conf"):',
      '    cfg = compose(config_name="config", overrides=["model=wide", "batch_size=4"])',
      'model = instantiate(cfg.model)',
      'x = torch.randn(cfg.batch_size, 16)',
      'model(x).sum().backward()',
      '',
    ].join('\n');
    const e = await estimate({
      'conf/config.yaml': 'defaults:\n  - model: small\nbatch_size: 32\n',
      'conf/model/small.yaml': '_target_: net.Net\nd_in: 16\nhidden: 8\n',
      'conf/model/wide.yaml': '_target_: net.Net\nd_in: 16\nhidden: 128\n',
      'net.py': NET,
      'train.py': script,
    });
    assert.equal(e.models[0]?.params, 16 * 128 + 128 + 128 * 2 + 2, notesOf(e).join('\n'));
    assert.equal(e.models[0]?.batchSize, 4);
  });

  it('says so, without failing, for a target it cannot look up or a configuration it did not read', async () => {
    const e = await estimate({
      'conf/config.yaml': 'batch_size: 8\nmodel:\n  _target_: "not a path"\n',
      'train.py': hydraScript('instantiate(cfg.model)').replace('    opt = ', '    other = instantiate(cfg.missing_key)\n    opt = '),
    });
    assert.equal(e.models.length, 0);
    const notes = notesOf(e).join('\n');
    assert.match(notes, /Hydra `_target_` "not a path" is not a dotted path the analysis can look up/);
    assert.match(notes, /instantiate\(cfg\.missing_key\): the configuration Hydra would instantiate is not one the analysis read/);
  });
});
