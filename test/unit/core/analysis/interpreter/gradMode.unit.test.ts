import * as assert from 'node:assert/strict';
import { estimateSource } from '../../../../../src/core/estimate/incrementalEstimator';
import type { ModelEstimate } from '../../../../../src/core/estimate/fileEstimate';
import { defaultGpuProfile } from '../../../../../src/core/gpus/gpuProfiles';
import { realParser } from '../../../fixtures';

/** A frozen-feature classifier whose forward runs its backbone inside `context` (a `with` line, or a decorator on `features`). */
function script(forward: string, decorator = ''): string {
  return [
    'import copy',
    'import torch',
    'import torch.nn as nn',
    'from torch import no_grad',
    '',
    'class Probe(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.backbone = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU())',
    '        self.head = nn.Linear(1024, 10)',
    '',
    ...(decorator ? [`    ${decorator}`] : []),
    '    def features(self, x):',
    '        return self.backbone(x)',
    '',
    '    def forward(self, x):',
    ...forward.split('\n').map((line) => `        ${line}`),
    '',
    'model = Probe()',
    'optimizer = torch.optim.Adam(model.head.parameters())',
    'x = torch.randn(256, 512)',
    'for step in range(10):',
    '    model(x).sum().backward()',
    '    optimizer.step()',
    '',
  ].join('\n');
}

async function probe(forward: string, decorator = ''): Promise<ModelEstimate> {
  const e = estimateSource('train.py', script(forward, decorator), await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1 });
  const model = e.models.find((m) => m.name === 'model');
  assert.ok(model, JSON.stringify(e.warnings));
  return model;
}

const withoutAutograd = (model: ModelEstimate) => model.layerTable.rows.filter((row) => row.noGrad).map((row) => row.path);
const BACKBONE = ['backbone.0', 'backbone.1', 'backbone.2', 'backbone.3'];

describe('autograd switched off in forward', () => {
  it('marks the calls under torch.no_grad(), torch.inference_mode(), torch.set_grad_enabled(False) and a bare no_grad import', async () => {
    for (const context of ['torch.no_grad()', 'torch.inference_mode()', 'torch.set_grad_enabled(False)', 'no_grad()', 'torch.autograd.no_grad()']) {
      const model = await probe(`with ${context}:\n    f = self.backbone(x)\nreturn self.head(f)`);
      assert.deepEqual(withoutAutograd(model), BACKBONE, context);
    }
  });

  it('leaves autograd on for set_grad_enabled(True), inference_mode(False) and other contexts', async () => {
    for (const context of ['torch.set_grad_enabled(True)', 'torch.inference_mode(False)', 'torch.autocast("cuda")', 'torch.enable_grad()']) {
      assert.deepEqual(withoutAutograd(await probe(`with ${context}:\n    f = self.backbone(x)\nreturn self.head(f)`)), [], context);
    }
  });

  it('marks the calls of a method decorated with @torch.no_grad()', async () => {
    assert.deepEqual(withoutAutograd(await probe('return self.head(self.features(x))', '@torch.no_grad()')), BACKBONE);
    assert.deepEqual(withoutAutograd(await probe('return self.head(self.features(x))', '@torch.no_grad')), BACKBONE);
  });

  it('estimates less: the backbone keeps nothing and gets no gradient, and a note says so', async () => {
    const off = await probe('with torch.no_grad():\n    f = self.backbone(x)\nreturn self.head(f)');
    const on = await probe('f = self.backbone(x)\nreturn self.head(f)');
    const analytical = (m: ModelEstimate) => m.estimates.find((r) => r.estimator === 'analytical')!.estimateMiB!;
    assert.ok(analytical(off) < analytical(on));
    assert.ok(off.memory.estimateMiB! < on.memory.estimateMiB!);
    // The optimizer holds the head alone in both; with autograd on, backward still fills the backbone's gradients.
    assert.ok(off.memory.breakdown!.gradientsMiB < 1 && on.memory.breakdown!.gradientsMiB > 5, `${off.memory.breakdown!.gradientsMiB} vs ${on.memory.breakdown!.gradientsMiB}`);
    assert.ok(off.notes.some((n) => /4 layer calls in forward run with autograd off.*1\.6M parameters only they use get no gradient/.test(n.message)), off.notes.map((n) => n.message).join('\n'));
  });
});

describe('copy.deepcopy of a module', () => {
  it('is a module of its own with the same layers: an EMA teacher called without autograd', async () => {
    const source = script('with torch.no_grad():\n    t = self.teacher(x)\nreturn self.head(self.backbone(x)) + t').replace("        self.head = nn.Linear(1024, 10)", "        self.head = nn.Linear(1024, 10)\n        self.teacher = copy.deepcopy(nn.Sequential(self.backbone, self.head))");
    const e = estimateSource('train.py', source, await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1 });
    const model = e.models.find((m) => m.name === 'model')!;
    const layers = 512 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 10 + 10;
    assert.equal(model.layerTable.totals.params, 2 * layers);
    assert.deepEqual(withoutAutograd(model), ['teacher.0.0', 'teacher.0.1', 'teacher.0.2', 'teacher.0.3', 'teacher.1']);
  });
});

describe('a model the script only runs for inference', () => {
  const distillation = (teacherCall: string) =>
    [
      'import torch',
      'import torch.nn as nn',
      'teacher = nn.Sequential(nn.Linear(512, 4096), nn.ReLU(), nn.Linear(4096, 10))',
      'student = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))',
      'optimizer = torch.optim.Adam(student.parameters())',
      'x = torch.randn(256, 512)',
      'for step in range(10):',
      ...teacherCall.split('\n').map((line) => `    ${line}`),
      '    loss = (student(x) - soft).pow(2).mean()',
      '    loss.backward()',
      '    optimizer.step()',
      '',
    ].join('\n');
  const teacherOf = async (teacherCall: string) => estimateSource('kd.py', distillation(teacherCall), await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1 }).models.find((m) => m.name === 'teacher')!;

  it('is estimated as inference where every call is under torch.no_grad(): no optimizer assumed, nothing kept for backward', async () => {
    const teacher = await teacherOf('with torch.no_grad():\n    soft = teacher(x)');
    assert.equal(teacher.inferenceOnly, true);
    assert.ok(teacher.layerTable.rows.every((row) => row.noGrad));
    assert.deepEqual(teacher.assumptions.find((a) => a.name === 'optimizer'), { name: 'optimizer', value: 'none', origin: 'inference only: every call under torch.no_grad()', line: 9 });
    assert.ok(!teacher.notes.some((n) => /Adam is assumed/.test(n.message)));
    assert.ok(teacher.notes.some((n) => /estimated as inference/.test(n.message)));
    const trained = await teacherOf('soft = teacher(x).detach()');
    assert.equal(trained.inferenceOnly, undefined);
    assert.ok(teacher.memory.estimateMiB! < trained.memory.estimateMiB!);
  });
});
