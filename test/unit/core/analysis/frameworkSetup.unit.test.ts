import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ModelEstimate } from '../../../../src/core/estimate/fileEstimate';
import { estimate, REPO_ROOT } from '../../fixtures';

const framework = (name: string) => readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'frameworks', name), 'utf8');
const assumption = (model: ModelEstimate, name: string) => {
  const found = model.assumptions.find((a) => a.name === name);
  return found && `${found.value} (${found.origin}, line ${found.line})`;
};

/** A small LightningModule classifier trained by `pl.Trainer(<trainer>)`. */
const lightningScript = (trainer: string) =>
  [
    'import pytorch_lightning as pl',
    'import torch',
    'import torch.nn as nn',
    'from torch.utils.data import DataLoader, TensorDataset',
    '',
    'class LitMLP(pl.LightningModule):',
    '    def __init__(self, hidden=256):',
    '        super().__init__()',
    '        self.net = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10))',
    '',
    '    def forward(self, x):',
    '        return self.net(x)',
    '',
    '    def training_step(self, batch, batch_idx):',
    '        x, y = batch',
    '        loss = nn.functional.cross_entropy(self(x), y)',
    '        self.log("train_loss", loss)',
    '        return loss',
    '',
    '    def configure_optimizers(self):',
    '        return torch.optim.AdamW(self.parameters(), lr=1e-3)',
    '',
    'loader = DataLoader(TensorDataset(torch.randn(512, 64), torch.randint(0, 10, (512,))), batch_size=32)',
    'model = LitMLP()',
    `trainer = pl.Trainer(${trainer})`,
    'trainer.fit(model, loader)',
  ].join('\n');

describe('what the analysis reads of the training frameworks (frameworkSetup.ts)', () => {
  it('reads a LightningModule holding a generator and a discriminator as one model, with the optimizers configure_optimizers makes and the Trainer\'s precision', async () => {
    const { models } = await estimate(framework('lightning_gan.py'));
    assert.deepEqual(
      models.map((m) => m.name),
      ['model'],
    );
    const [model] = models as [ModelEstimate];
    // Generator 1,496,592 + discriminator 533,505 parameters.
    assert.equal(model.params, 1_496_592 + 533_505);
    assert.equal(assumption(model, 'optimizer'), 'adam (Adam(...), line 95)');
    assert.equal(assumption(model, 'precision'), 'fp16-mixed (Trainer(precision="16-mixed"), line 103)');
    // trainer.fit(model, dm) runs the data module's train_dataloader(): batch_size=self.batch_size, 64 as the script builds it.
    assert.equal(assumption(model, 'batchSize'), '64 (DataLoader(batch_size=...), line 60)');
    assert.ok(!model.notes.some((note) => /optimizer/i.test(note.message)), JSON.stringify(model.notes));
  });

  it('points a data module\'s batch size at the line that builds the data module when trainer.fit is not in the file', async () => {
    const source = framework('lightning_gan.py').replace('    trainer.fit(model, dm)\n', '');
    const [model] = (await estimate(source)).models as [ModelEstimate];
    assert.equal(assumption(model, 'batchSize'), '64 (dm.batch_size, line 101)');
  });

  it('runs the data module\'s setup() before train_dataloader(), as Lightning does: the dataset made there gives the input shape', async () => {
    const source = [
      'import lightning.pytorch as pl',
      'import torch',
      'import torch.nn as nn',
      'import torch.nn.functional as F',
      'import torchvision.transforms as T',
      'from torch.utils.data import DataLoader',
      'from torchvision.datasets import CIFAR10',
      '',
      'class CIFARData(pl.LightningDataModule):',
      '    def __init__(self, batch_size=256):',
      '        super().__init__()',
      '        self.batch_size = batch_size',
      '',
      '    def setup(self, stage=None):',
      '        self.train_set = CIFAR10("data", train=True, transform=T.Compose([T.RandomCrop(32, padding=4), T.ToTensor()]))',
      '',
      '    def train_dataloader(self):',
      '        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True)',
      '',
      'class Classifier(pl.LightningModule):',
      '    def __init__(self):',
      '        super().__init__()',
      '        self.net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))',
      '',
      '    def forward(self, x):',
      '        return self.net(x)',
      '',
      '    def training_step(self, batch, batch_idx):',
      '        x, y = batch',
      '        return F.cross_entropy(self(x), y)',
      '',
      '    def configure_optimizers(self):',
      '        return torch.optim.SGD(self.parameters(), lr=0.1)',
      '',
      'def main():',
      '    trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=5)',
      '    trainer.fit(Classifier(), datamodule=CIFARData(batch_size=128))',
      '',
      'if __name__ == "__main__":',
      '    main()',
    ].join('\n');
    const [model] = (await estimate(source)).models as [ModelEstimate];
    assert.equal(assumption(model, 'batchSize'), '128 (DataLoader(batch_size=...), line 18)');
    assert.equal(assumption(model, 'inputShape'), '(3, 32, 32) (CIFAR10 samples after RandomCrop(32), line 15)');
  });

  it('reads self.hparams after save_hyperparameters(): the __init__ arguments as the script passed them', async () => {
    const source = [
      'import lightning as L',
      'import torch',
      'import torch.nn as nn',
      'from torch.utils.data import DataLoader',
      'from torchvision import datasets, transforms',
      '',
      'class FashionData(L.LightningDataModule):',
      '    def __init__(self, data_dir="data", batch_size=64, num_workers=4):',
      '        super().__init__()',
      '        self.save_hyperparameters()',
      '',
      '    def train_dataloader(self):',
      '        ds = datasets.FashionMNIST(self.hparams.data_dir, train=True, transform=transforms.ToTensor())',
      '        return DataLoader(ds, batch_size=self.hparams.batch_size, num_workers=self.hparams.num_workers)',
      '',
      'class Classifier(L.LightningModule):',
      '    def __init__(self, hidden=512, lr=1e-3):',
      '        super().__init__()',
      '        self.save_hyperparameters()',
      '        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, self.hparams.hidden), nn.ReLU(), nn.Linear(self.hparams.hidden, 10))',
      '',
      '    def forward(self, x):',
      '        return self.net(x)',
      '',
      '    def configure_optimizers(self):',
      '        return torch.optim.RMSprop(self.parameters(), lr=self.hparams.lr)',
      '',
      'model = Classifier(hidden=1024)',
      'L.Trainer(max_epochs=3).fit(model, datamodule=FashionData(batch_size=200))',
    ].join('\n');
    const [model] = (await estimate(source)).models as [ModelEstimate];
    assert.equal(model.params, 784 * 1024 + 1024 + 1024 * 10 + 10);
    assert.equal(assumption(model, 'batchSize'), '200 (DataLoader(batch_size=...), line 14)');
    assert.equal(assumption(model, 'optimizer'), 'rmsprop (RMSprop(...), line 26)');
  });

  it('reads Lightning\'s precision values', async () => {
    const cases: [string, string][] = [
      ['precision=16', 'fp16-mixed'],
      ['precision="bf16-mixed"', 'bf16-mixed'],
      ['precision="bf16-true"', 'bf16'],
      ['precision="16-true"', 'fp16'],
      ['precision="32-true"', 'fp32'],
    ];
    for (const [argument, expected] of cases) {
      const { models } = await estimate(lightningScript(`max_epochs=5, ${argument}, accumulate_grad_batches=4`));
      assert.equal(models.length, 1, argument);
      assert.equal(models[0]!.precision, expected, argument);
      assert.equal(assumption(models[0]!, 'optimizer'), 'adamw (AdamW(...), line 21)', argument);
      assert.equal(assumption(models[0]!, 'batchSize'), '32 (DataLoader(batch_size=...), line 23)', argument);
    }
  });

  it('reads accumulate_grad_batches as an assumption, and says that an FSDP or DeepSpeed strategy is not modelled', async () => {
    const [model] = (await estimate(lightningScript('accumulate_grad_batches=8, strategy="fsdp"'))).models as [ModelEstimate];
    assert.equal(assumption(model, 'gradientAccumulation'), '8 micro-batches per optimizer step (Trainer(accumulate_grad_batches=8), line 25)');
    assert.ok(model.notes.some((note) => note.message === 'Trainer(strategy="fsdp") shards the model across GPUs; the estimate is of one unsharded replica, so it is high for each GPU.' && note.range?.startLine === 24), JSON.stringify(model.notes));
    const [plain] = (await estimate(lightningScript('accumulate_grad_batches=1, strategy="ddp"'))).models as [ModelEstimate];
    assert.equal(assumption(plain, 'gradientAccumulation'), undefined);
    assert.ok(!plain.notes.some((note) => /shards/.test(note.message)));
  });

  it('reads TrainingArguments: batch per device, bf16, gradient checkpointing and optim', async () => {
    const { models } = await estimate(framework('hf_trainer_bf16.py'));
    const [model] = models as [ModelEstimate];
    assert.equal(assumption(model, 'gradientAccumulation'), '2 micro-batches per optimizer step (TrainingArguments(gradient_accumulation_steps=2), line 30)');
    assert.equal(assumption(model, 'batchSize'), '16 (TrainingArguments(per_device_train_batch_size=...), line 28)');
    assert.equal(assumption(model, 'precision'), 'bf16-mixed (TrainingArguments(bf16=True), line 33)');
    assert.equal(assumption(model, 'gradientCheckpointing'), 'on (TrainingArguments(gradient_checkpointing=True), line 34)');
    assert.equal(assumption(model, 'optimizer'), 'adafactor (TrainingArguments(optim="adafactor"), line 35)');
  });

  it('takes the Trainer\'s defaults when TrainingArguments leaves them out: 8 per device, AdamW', async () => {
    const source = framework('hf_trainer_bf16.py')
      .replace('    per_device_train_batch_size=16,\n', '')
      .replace('    optim="adafactor",\n', '')
      .replace('    bf16=True,\n', '');
    const [model] = (await estimate(source)).models as [ModelEstimate];
    assert.equal(assumption(model, 'batchSize'), '8 (TrainingArguments default per_device_train_batch_size, line 25)');
    assert.equal(assumption(model, 'optimizer'), 'adamw (TrainingArguments default optim (adamw_torch, whose step makes a temporary the size of one state; with torch 2.8 or later transformers takes adamw_torch_fused, which makes none), line 25)');
    assert.equal(model.precision, 'fp32');
  });

  it('reads Accelerator(mixed_precision=...) and keeps the model through accelerator.prepare(...)', async () => {
    const { models } = await estimate(framework('accelerate_mixed_precision.py'));
    assert.equal(models.length, 1);
    const [model] = models as [ModelEstimate];
    assert.equal(assumption(model, 'precision'), 'fp16-mixed (Accelerator(mixed_precision="fp16"), line 37)');
    assert.equal(assumption(model, 'optimizer'), 'sgd-momentum (SGD(...), line 41)');
    assert.equal(assumption(model, 'batchSize'), '256 (DataLoader(batch_size=...), line 39)');
  });

  it('reads FSDP\'s MixedPrecision(param_dtype=...) as mixed precision, and keeps the wrapped model one model', async () => {
    const source = [
      'import torch',
      'import torch.nn as nn',
      'from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision',
      '',
      'policy = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.bfloat16)',
      'model = nn.TransformerEncoder(nn.TransformerEncoderLayer(512, 8, batch_first=True), num_layers=6)',
      'model = FSDP(model, mixed_precision=policy)',
      'optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)',
      'for step in range(100):',
      '    x = torch.randn(16, 256, 512)',
      '    model(x).mean().backward()',
      '    optimizer.step()',
    ].join('\n');
    const { models } = await estimate(source);
    assert.equal(models.length, 1);
    assert.equal(assumption(models[0]!, 'precision'), 'bf16-mixed (MixedPrecision(param_dtype=torch.bfloat16), line 5)');
    assert.equal(assumption(models[0]!, 'optimizer'), 'adamw (AdamW(...), line 8)');
  });

  it('reads half-typed framework calls without throwing', async () => {
    for (const tail of ['trainer = pl.Trainer(precision=', 'trainer = pl.Trainer(precision="16-mixed").fit(', 'trainer = pl.Trainer(**cfg).fit(model, datamodule=)']) {
      const source = lightningScript('').replace('trainer = pl.Trainer()\ntrainer.fit(model, loader)', tail);
      assert.equal((await estimate(source)).models.length, 1, tail);
    }
  });
});
