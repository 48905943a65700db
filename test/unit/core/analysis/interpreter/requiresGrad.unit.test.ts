import * as assert from 'node:assert/strict';
import { estimateSource } from '../../../../../src/core/estimate/incrementalEstimator';
import type { FileEstimate, ModelEstimate } from '../../../../../src/core/estimate/fileEstimate';
import { defaultGpuProfile } from '../../../../../src/core/gpus/gpuProfiles';
import { realParser } from '../../../fixtures';

async function estimate(source: string): Promise<FileEstimate> {
  return estimateSource('train.py', source, await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1 });
}

/** A backbone of two stages and a head, trained on random batches: what each test freezes comes after it. */
const NET = [
  'import torch',
  'import torch.nn as nn',
  '',
  'class Net(nn.Module):',
  '    def __init__(self):',
  '        super().__init__()',
  '        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU())',
  '        self.stage = nn.Sequential(nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())',
  '        self.head = nn.Linear(64, 10)',
  '',
  '    def forward(self, x):',
  '        return self.head(self.stage(self.stem(x)))',
  '',
  'model = Net()',
].join('\n');

const TRAIN = ['optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)', 'x = torch.randn(64, 3, 32, 32)', 'for step in range(10):', '    loss = model(x).sum()', '    loss.backward()', '    optimizer.step()'].join('\n');

const STEM = 3 * 32 * 9 + 32 + 2 * 32;
const STAGE = 32 * 64 * 9 + 64 + 2 * 64;
const HEAD = 64 * 10 + 10;

const warnings = new WeakMap<ModelEstimate, readonly string[]>();

async function trained(freezing: string): Promise<ModelEstimate> {
  const e = await estimate(`${NET}\n${freezing}\n${TRAIN}\n`);
  const model = e.models.find((m) => m.name === 'model');
  assert.ok(model, JSON.stringify(e.warnings));
  warnings.set(model, e.warnings);
  return model;
}

const trainableOf = (model: ModelEstimate) => model.layerTable.totals.trainableParams;
/** The model's notes and the file's warnings (a note about script code outside any model is the file's). */
const notes = (model: ModelEstimate) => [...model.notes.map((n) => n.message), ...(warnings.get(model) ?? [])].join('\n');

describe('requires_grad: what the script freezes', () => {
  it('counts every parameter as trained when nothing is frozen', async () => {
    const model = await trained('');
    assert.equal(trainableOf(model), STEM + STAGE + HEAD);
    assert.doesNotMatch(notes(model), /frozen/);
  });

  it('decides isinstance on modules: freezing the batch norms of a loop over modules()', async () => {
    const model = await trained(['for m in model.modules():', '    if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):', '        m.requires_grad_(False)'].join('\n'));
    assert.equal(trainableOf(model), STEM + STAGE + HEAD - 2 * 32 - 2 * 64);
    const net = await trained(['for m in model.modules():', '    if isinstance(m, Net):', '        m.head.requires_grad_(False)'].join('\n'));
    assert.equal(trainableOf(net), STEM + STAGE);
  });

  it('freezes a loop over parameters() and trains a head put in afterwards', async () => {
    const model = await trained(['for p in model.parameters():', '    p.requires_grad = False', 'model.head = nn.Linear(64, 10)'].join('\n'));
    assert.equal(trainableOf(model), HEAD);
    assert.match(notes(model), /parameters frozen \(requires_grad=False\), 650 trained.*layers before `head` keep no activations/);
  });

  it('reads requires_grad_() on modules in order: the last setting for a parameter wins', async () => {
    assert.equal(trainableOf(await trained('model.requires_grad_(False)\nmodel.head.requires_grad_(True)')), HEAD);
    assert.equal(trainableOf(await trained('model.head.requires_grad_(True)\nmodel.requires_grad_(False)')), 0);
    assert.equal(trainableOf(await trained('model.stem.requires_grad_(False)')), STAGE + HEAD);
  });

  it('evaluates conditions on named_parameters() names', async () => {
    const model = await trained(['for name, param in model.named_parameters():', '    if not name.startswith(("stage", "head")):', '        param.requires_grad = False'].join('\n'));
    assert.equal(trainableOf(model), STAGE + HEAD);
    assert.match(notes(model), /layers before `stage\.0` keep no activations/);
  });

  it('follows nested loops over submodules, slices of the parameter list and p.requires_grad_()', async () => {
    assert.equal(trainableOf(await trained(['for block in [model.stem, model.stage]:', '    for p in block.parameters():', '        p.requires_grad_(False)'].join('\n'))), HEAD);
    assert.equal(trainableOf(await trained(['for p in list(model.parameters())[:-2]:', '    p.requires_grad = False'].join('\n'))), HEAD);
  });

  it('freezes one weight assigned directly (a frozen embedding) and a module frozen before it is put in', async () => {
    assert.equal(trainableOf(await trained('model.head.weight.requires_grad = False')), STEM + STAGE);
    assert.equal(trainableOf(await trained('fixed = nn.Linear(64, 10)\nfixed.requires_grad_(False)\nmodel.head = fixed')), STEM + STAGE);
  });

  it('keeps a frozen module frozen when it is put into another container', async () => {
    const e = await estimate(`${NET}\nmodel.requires_grad_(False)\nclf = nn.Sequential(model.stem, model.stage, nn.Linear(64, 10))\n${TRAIN.replace('model.parameters()', 'clf.parameters()').replace('model(x)', 'clf(x)')}\n`);
    const clf = e.models.find((m) => m.name === 'clf');
    assert.ok(clf, e.models.map((m) => m.name).join());
    assert.equal(trainableOf(clf), HEAD);
  });

  it('counts parameters as trained, and says so, where the freezing depends on what the analysis cannot know', async () => {
    const model = await trained(['import random', 'if random.random() > 0.5:', '    for p in model.stem.parameters():', '        p.requires_grad = False'].join('\n'));
    assert.equal(trainableOf(model), STEM + STAGE + HEAD);
    assert.match(notes(model), /`p\.requires_grad = False`: runs under a condition the analysis cannot decide; those parameters are counted as trained/);
  });

  it('estimates less when the backbone is frozen: no gradients, no optimizer state, no activations kept before the head', async () => {
    const full = await trained('');
    const head = await trained('for p in model.parameters():\n    p.requires_grad = False\nmodel.head = nn.Linear(64, 10)');
    const analytical = (m: ModelEstimate) => m.estimates.find((r) => r.estimator === 'analytical')!.estimateMiB!;
    assert.ok(head.memory.estimateMiB! < full.memory.estimateMiB!, `${head.memory.estimateMiB} vs ${full.memory.estimateMiB}`);
    assert.ok(analytical(head) < analytical(full));
    assert.equal(head.memory.method, 'real-model');
  });

  it('freezes parts of a torchvision model by attribute and by parameter name', async () => {
    const vgg = (freezing: string) =>
      estimate(['import torch', 'import torch.nn as nn', 'import torchvision', 'model = torchvision.models.vgg11(weights=None)', freezing, 'opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.01)', 'x = torch.randn(16, 3, 224, 224)', 'model(x).sum().backward()', ''].join('\n'));
    const byAttribute = (await vgg('for p in model.features.parameters():\n    p.requires_grad = False')).models[0]!;
    const byName = (await vgg('for n, p in model.named_parameters():\n    if "classifier" not in n:\n        p.requires_grad = False')).models[0]!;
    const classifier = 25088 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * 1000 + 1000;
    assert.equal(trainableOf(byAttribute), classifier);
    assert.equal(trainableOf(byName), classifier);
  });

  it('freezes a 70B model in one setting, and leaves a per-name loop over its 1,450 tensors unapplied with a note', async () => {
    const llm = (loop: string) =>
      estimate(['import torch', 'from transformers import AutoModelForCausalLM, Trainer, TrainingArguments', 'model = AutoModelForCausalLM.from_pretrained("meta-llama/Meta-Llama-3-70B", torch_dtype=torch.bfloat16)', loop, 'args = TrainingArguments(output_dir="o", per_device_train_batch_size=1, bf16=True, gradient_checkpointing=True)', 'Trainer(model=model, args=args).train()', ''].join('\n'));
    const head = (await llm('for param in model.parameters():\n    param.requires_grad = False\nfor param in model.lm_head.parameters():\n    param.requires_grad = True')).models[0]!;
    assert.equal(head.batchSize, 1, 'the Trainer after the loops is still read');
    assert.equal(trainableOf(head), 8192 * 128256);
    const perName = await llm('for name, param in model.named_parameters():\n    param.requires_grad = name[-11:] == "norm.weight" or "layers.79." in name');
    assert.equal(trainableOf(perName.models[0]!), perName.models[0]!.layerTable.totals.params);
    assert.match(perName.warnings.join('\n'), /too many parameter tensors to follow .* one by one: the requires_grad settings of this loop are not applied/);
  });

  it('reads string slices of parameter names', async () => {
    const model = await trained(['for name, p in model.named_parameters():', '    if name[:4] != "head":', '        p.requires_grad = False'].join('\n'));
    assert.equal(trainableOf(model), HEAD);
  });

  it('counts a backbone unfrozen at a later epoch as trained: the peak comes after the unfreezing', async () => {
    const gradual = (unfreeze: string) =>
      estimate(`${NET}\nfor p in model.parameters():\n    p.requires_grad = False\nmodel.head = nn.Linear(64, 10)\noptimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\nx = torch.randn(64, 3, 32, 32)\nfor epoch in range(30):\n${unfreeze}\n    loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n`);
    const later = (await gradual('    if epoch == 10:\n        model.requires_grad_(True)')).models[0]!;
    assert.equal(trainableOf(later), STEM + STAGE + HEAD);
    const stemFirst = (await gradual('    if epoch >= 5:\n        for p in model.stage.parameters():\n            p.requires_grad = True')).models[0]!;
    assert.equal(trainableOf(stemFirst), STAGE + HEAD);
    // Frozen again at a later epoch: where it cannot be placed it is not applied.
    const refrozen = (await gradual('    if epoch == 20:\n        model.head.requires_grad_(False)')).models[0]!;
    assert.equal(trainableOf(refrozen), HEAD);
  });

  it('decides a flag that reads the loop variable per parameter, though an earlier loop left the name bound', async () => {
    const model = await trained(['for name, p in model.stem.named_parameters():', '    pass', 'for name, p in model.named_parameters():', '    p.requires_grad = name.startswith("head")'].join('\n'));
    assert.equal(trainableOf(model), HEAD);
  });

  it('applies no freezing where the script unfreezes parameters the analysis cannot follow, and says so', async () => {
    const model = await trained(['for p in model.parameters():', '    p.requires_grad = False', 'for p in model.get_head().parameters():', '    p.requires_grad = True'].join('\n'));
    assert.equal(trainableOf(model), STEM + STAGE + HEAD);
    assert.match(notes(model), /`p\.requires_grad = True`: unfreezes parameters the analysis cannot follow, so what the script freezes is not applied/);
  });

  it('counts optimizer state only for the parts the optimizer is given, with a note, when nothing is frozen', async () => {
    const e = await estimate(`${NET}\n${TRAIN.replace('model.parameters()', 'model.head.parameters()')}\n`);
    const model = e.models[0]!;
    const all = (await trained('')).memory.breakdown!;
    // Adam's two moments and its step's temporary of the head (650 parameters): far below a MiB.
    assert.ok(model.memory.breakdown!.optimizerMiB < 0.05 && all.optimizerMiB > 0.15, `${model.memory.breakdown!.optimizerMiB} vs ${all.optimizerMiB}`);
    assert.equal(model.memory.breakdown!.gradientsMiB, all.gradientsMiB);
    assert.ok(model.notes.some((n) => /The optimizer holds the parameters of `head` only/.test(n.message)));
  });

  it('says nothing of the parts the optimizer is not given where they are frozen (a linear probe)', async () => {
    const freeze = ['for p in model.parameters():', '    p.requires_grad = False', 'for p in model.head.parameters():', '    p.requires_grad = True'].join('\n');
    const e = await estimate(`${NET}\n${freeze}\n${TRAIN.replace('model.parameters()', 'model.head.parameters()')}\n`);
    assert.ok(!e.models[0]!.notes.some((n) => /The optimizer holds the parameters of/.test(n.message)), e.models[0]!.notes.map((n) => n.message).join('\n'));
  });

  it("reads LightningModule.freeze() on a module held by another: its parameters are frozen, unfreeze() trains them again", async () => {
    const lightning = (call: string) =>
      estimate(
        [
          'import lightning as L',
          'import torch',
          'import torch.nn as nn',
          'class Encoder(L.LightningModule):',
          '    def __init__(self):',
          '        super().__init__()',
          '        self.net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 64))',
          '    def forward(self, x):',
          '        return self.net(x)',
          'class Classifier(L.LightningModule):',
          '    def __init__(self):',
          '        super().__init__()',
          '        self.encoder = Encoder()',
          `        ${call}`,
          '        self.head = nn.Linear(64, 10)',
          '    def forward(self, x):',
          '        return self.head(self.encoder(x))',
          '    def training_step(self, batch, batch_idx):',
          '        x, y = batch',
          '        return nn.functional.cross_entropy(self(x), y)',
          '    def configure_optimizers(self):',
          '        return torch.optim.Adam(self.parameters())',
          'model = Classifier()',
          'loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(100, 784), torch.randint(0, 10, (100,))), batch_size=32)',
          'L.Trainer().fit(model, loader)',
          '',
        ].join('\n'),
      );
    const frozen = (await lightning('self.encoder.freeze()')).models[0]!;
    assert.equal(frozen.layerTable.totals.trainableParams, 64 * 10 + 10);
    const again = (await lightning('self.encoder.freeze(); self.encoder.unfreeze()')).models[0]!;
    assert.equal(again.layerTable.totals.trainableParams, again.layerTable.totals.params);
  });
});
