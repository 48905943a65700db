import * as assert from 'node:assert/strict';
import type { ProjectContext } from '../../../../../src/core/analysis/analyzeSource';
import { estimateSource } from '../../../../../src/core/estimate/incrementalEstimator';
import type { FileEstimate } from '../../../../../src/core/estimate/fileEstimate';
import { defaultGpuProfile } from '../../../../../src/core/gpus/gpuProfiles';
import { ParsedModules } from '../../../../../src/core/project/parsedModules';
import { MemoryProjectFiles } from '../../../../../src/core/project/projectFiles';
import { realParser } from '../../../fixtures';

/** Estimates `/p/train.py` of an in-memory project, run with these arguments. */
async function estimate(files: Record<string, string>, scriptArguments: string[] = []): Promise<FileEstimate> {
  const parser = await realParser();
  const parsed = new ParsedModules(parser);
  const project: ProjectContext = { source: { files: new MemoryProjectFiles(Object.entries(files).map(([name, text]) => [`/p/${name}`, text])), path: '/p/train.py', root: '/p' }, parse: (p, text) => parsed.parse(p, text) };
  return estimateSource('train.py', files['train.py']!, parser, { gpu: defaultGpuProfile(), safetyMargin: 0.1, scriptArguments }, project);
}

const notesOf = (e: FileEstimate): string[] => [...e.warnings, ...e.models.flatMap((m) => m.notes.map((n) => n.message))];

const DEFAULTS = ['from yacs.config import CfgNode as CN', '', '_C = CN()', '_C.MODEL = CN()', '_C.MODEL.WIDTH = 16', '_C.MODEL.DEPTH = 2', '_C.SOLVER = CN()', '_C.SOLVER.IMS_PER_BATCH = 32', '', 'def get_cfg_defaults():', '    return _C.clone()', ''].join('\n');

const TRAIN = [
  'import argparse',
  'import torch',
  'import torch.nn as nn',
  'from config.defaults import get_cfg_defaults',
  '',
  'parser = argparse.ArgumentParser()',
  'parser.add_argument("--config-file", default="")',
  'parser.add_argument("opts", nargs=argparse.REMAINDER, default=None)',
  'args = parser.parse_args()',
  'cfg = get_cfg_defaults()',
  'if args.config_file:',
  '    cfg.merge_from_file(args.config_file)',
  'cfg.merge_from_list(args.opts)',
  'cfg.freeze()',
  'model = nn.Sequential(*[nn.Linear(cfg.MODEL.WIDTH, cfg.MODEL.WIDTH) for _ in range(cfg["MODEL"].DEPTH)])',
  'opt = torch.optim.SGD(model.parameters(), lr=0.1)',
  'x = torch.randn(cfg.SOLVER.IMS_PER_BATCH, cfg.MODEL.WIDTH)',
  'model(x).sum().backward()',
  '',
].join('\n');

const FILES = {
  'train.py': TRAIN,
  'config/__init__.py': '',
  'config/defaults.py': DEFAULTS,
  'configs/base.yaml': 'MODEL:\n  DEPTH: 3\nSOLVER:\n  IMS_PER_BATCH: 64\n',
  'configs/big.yaml': '_BASE_: base.yaml\nMODEL:\n  WIDTH: 32\n',
};

const linears = (width: number, depth: number) => depth * (width * width + width);

describe('yacs CfgNode configurations', () => {
  it('reads the defaults set attribute by attribute, through clone()', async () => {
    const e = await estimate(FILES);
    assert.equal(e.models[0]?.params, linears(16, 2), notesOf(e).join('\n'));
    assert.equal(e.models[0]?.batchSize, 32);
  });

  it('merges the --config-file (with its _BASE_ file under it) and the KEY VALUE pairs after it', async () => {
    const e = await estimate(FILES, ['--config-file', 'configs/big.yaml', 'MODEL.DEPTH', '4']);
    assert.equal(e.models[0]?.params, linears(32, 4), notesOf(e).join('\n'));
    assert.equal(e.models[0]?.batchSize, 64);
  });

  it('builds a node from a mapping and says so, without failing, for a file name it does not know', async () => {
    const e = await estimate({
      'train.py': ['import os', 'import torch', 'import torch.nn as nn', 'from yacs.config import CfgNode', 'cfg = CfgNode({"model": {"width": 8}})', 'cfg.merge_from_file(os.environ["CFG"])', 'model = nn.Linear(cfg.model.width, 2)', 'model(torch.randn(4, 8)).sum().backward()', ''].join('\n'),
    });
    assert.equal(e.models[0]?.params, 8 * 2 + 2, notesOf(e).join('\n'));
    assert.ok(notesOf(e).some((n) => /the file's name is not known to the analysis/.test(n)), notesOf(e).join('\n'));
  });
});
