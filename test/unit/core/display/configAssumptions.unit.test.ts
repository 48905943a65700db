import * as assert from 'node:assert/strict';
import { describeAssumption } from '../../../../src/core/display/describe';
import { hoverText } from '../../../../src/core/display/hoverText';
import type { Assumption } from '../../../../src/core/estimate/fileEstimate';
import { estimateSource } from '../../../../src/core/estimate/incrementalEstimator';
import { defaultGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { ParsedModules } from '../../../../src/core/project/parsedModules';
import { MemoryProjectFiles } from '../../../../src/core/project/projectFiles';
import { realParser } from '../../fixtures';

describe('configuration read, as the surfaces word it', () => {
  it('a config value with its file and line, an environment default, a size from the data', () => {
    const fromFile: Assumption = { name: 'config', key: 'model.n_layer', value: '6', origin: 'config file', line: 5, file: 'configs/base.yaml' };
    assert.equal(describeAssumption(fromFile), 'model.n_layer = 6 (config file, configs/base.yaml line 5)');
    const env: Assumption = { name: 'config', key: 'BATCH_SIZE', value: '1000', origin: "environment variable BATCH_SIZE unset: the script's default", line: 8 };
    assert.equal(describeAssumption(env), "BATCH_SIZE = 1000 (environment variable BATCH_SIZE unset: the script's default, line 8)");
    const data: Assumption = { name: 'dataDerived', key: 'ntokens', value: '50257', what: 'vocabulary size', origin: 'from the data (len(corpus.dictionary))', line: 31 };
    assert.equal(describeAssumption(data), 'vocabulary size (ntokens) 50257 (from the data (len(corpus.dictionary)), line 31)');
  });

  it('the hover links a value to its line in the config file', async () => {
    const files = new MemoryProjectFiles([
      ['/p/train.py', 'import yaml\nimport torch\nimport torch.nn as nn\ncfg = yaml.safe_load(open("conf.yaml"))\nmodel = nn.Linear(8, cfg["width"])\nx = torch.randn(4, 8)\nmodel(x).sum().backward()\n'],
      ['/p/conf.yaml', '# widths\nwidth: 32\n'],
    ]);
    const parsed = new ParsedModules(await realParser());
    const estimate = estimateSource('train.py', files.read('/p/train.py')!, await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1 }, { source: { files, path: '/p/train.py', root: '/p' }, parse: (p, text) => parsed.parse(p, text) });
    const text = hoverText(estimate, estimate.models[0]!, 'file:///p/train.py', (path) => `file://${path}`);
    assert.match(text, /- width = 32 \(config file, \[conf\.yaml line 2\]\(file:\/\/\/p\/conf\.yaml#L2\)\)\n/);
  });
});
