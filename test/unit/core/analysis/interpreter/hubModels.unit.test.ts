import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { estimate, REPO_ROOT } from '../../../fixtures';

/** A hub image classifier fine-tuned with a new head: `load` is the from_pretrained call's arguments. */
const script = (load: string) =>
  [
    'import torch',
    'from transformers import AutoModelForImageClassification',
    `model = AutoModelForImageClassification.from_pretrained(${load}).cuda()`,
    'optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)',
    'for step in range(100):',
    '    x = torch.randn(32, 3, 224, 224).cuda()',
    '    model(pixel_values=x).logits.sum().backward()',
    '    optimizer.step()',
    '    optimizer.zero_grad()',
    '',
  ].join('\n');

const warns = (notes: ReadonlyArray<{ readonly message: string }>) => notes.some((n) => /label head.*ignore_mismatched_sizes=True/.test(n.message));
const text = (notes: ReadonlyArray<{ readonly message: string }>) => notes.map((n) => n.message).join('\n');

describe('hub image models: a new label head', () => {
  it('reads ignore_mismatched_sizes=True from the call: no warning, the head has the new labels', async () => {
    const [model] = (await estimate(script('"microsoft/resnet-50", num_labels=10, ignore_mismatched_sizes=True'))).models;
    assert.equal(model!.params, 25_557_032 - 2049 * 1000 + 2049 * 10);
    assert.ok(!warns(model!.notes), text(model!.notes));
  });

  it('warns where the script leaves it out, as from_pretrained then raises', async () => {
    const [model] = (await estimate(script('"facebook/convnext-tiny-224", num_labels=10'))).models;
    assert.ok(warns(model!.notes), text(model!.notes));
  });
});

describe('hub image models: a backbone with a head of the script', () => {
  it("follows last_hidden_state: the class token and the patch tokens' mean size the head", async () => {
    const source = [
      'import torch',
      'import torch.nn as nn',
      'from transformers import AutoModel',
      'class Probe(nn.Module):',
      '    def __init__(self):',
      '        super().__init__()',
      '        self.backbone = AutoModel.from_pretrained("facebook/dinov2-small")',
      '        self.head = nn.Linear(2 * 384, 7)',
      '    def forward(self, x):',
      '        tokens = self.backbone(pixel_values=x).last_hidden_state',
      '        return self.head(torch.cat([tokens[:, 0], tokens[:, 1:].mean(dim=1)], dim=-1))',
      'model = Probe().cuda()',
      'optimizer = torch.optim.AdamW(model.parameters())',
      'for step in range(10):',
      '    model(torch.randn(16, 3, 224, 224).cuda()).sum().backward()',
      '    optimizer.step()',
      '',
    ].join('\n');
    const [model] = (await estimate(source)).models;
    assert.equal(model!.layerTable.incomplete, false, text(model!.notes));
    assert.deepEqual(model!.layerTable.rows.find((row) => row.path === 'head')?.outputShape, [7]);
  });

  it('gives a ConvNeXt backbone its last feature map, before pooling', async () => {
    const source = [
      'import torch',
      'import torch.nn as nn',
      'from transformers import ConvNextModel',
      'class Segmenter(nn.Module):',
      '    def __init__(self):',
      '        super().__init__()',
      '        self.backbone = ConvNextModel.from_pretrained("facebook/convnext-tiny-224")',
      '        self.head = nn.Conv2d(768, 21, 1)',
      '    def forward(self, x):',
      '        return self.head(self.backbone(x).last_hidden_state)',
      'model = Segmenter().cuda()',
      'optimizer = torch.optim.SGD(model.parameters(), lr=0.01)',
      'for step in range(10):',
      '    model(torch.randn(8, 3, 512, 512).cuda()).mean().backward()',
      '    optimizer.step()',
      '',
    ].join('\n');
    const [model] = (await estimate(source)).models;
    assert.deepEqual(model!.layerTable.rows.find((row) => row.path === 'head')?.outputShape, [21, 16, 16], text(model!.notes));
  });
});

describe('hub text models: BERT under a head of the script', () => {
  it("sizes the head from model.config, feeds the tokenizer's length, and counts no vocabulary logits for a base model", async () => {
    const source = readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'frameworks', 'hf_bert_custom_head.py'), 'utf8');
    const [model] = (await estimate(source)).models;
    assert.equal(model!.layerTable.incomplete, false, text(model!.notes));
    assert.deepEqual(model!.inputShape, [256]);
    assert.deepEqual(model!.layerTable.rows.find((row) => row.path === 'out')?.outputShape, [3]);
    assert.equal(model!.memory.method, 'fineTuning');
    // The CPU dry run (PyTorch 2.4.1, transformers 4.51.3) gives 8,328 MiB; with 30,522-entry logits counted for BertModel it was 13,306.
    assert.ok(model!.memory.estimateMiB! > 7500 && model!.memory.estimateMiB! < 9500, String(model!.memory.estimateMiB));
  });

  it("follows the pooled output too: outputs.pooler_output, and the tuple of return_dict=False", async () => {
    const source = readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'frameworks', 'hf_bert_custom_head.py'), 'utf8');
    const variants = [
      source.replace('cls = outputs.last_hidden_state[:, 0, :]', 'cls = outputs.pooler_output'),
      source
        .replace('outputs = self.bert(input_ids=input_ids, attention_mask=attention_mask)', '_, pooled = self.bert(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)')
        .replace('cls = outputs.last_hidden_state[:, 0, :]', 'cls = pooled'),
    ];
    for (const variant of variants) {
      assert.notEqual(variant, source);
      const [model] = (await estimate(variant)).models;
      assert.equal(model!.layerTable.incomplete, false, text(model!.notes));
      assert.deepEqual(model!.layerTable.rows.find((row) => row.path === 'out')?.outputShape, [3]);
    }
  });
});

describe('hub text models: what the head holds', () => {
  const fineTune = (model: string) =>
    [
      'import torch',
      'from transformers import AutoModelForMaskedLM, AutoModelForPreTraining, AutoModelForTokenClassification, AutoModel',
      `model = ${model}.cuda()`,
      'optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)',
      'for step in range(100):',
      '    ids = torch.randint(0, 30000, (16, 512)).cuda()',
      '    out = model(input_ids=ids)',
      '    out[0].float().mean().backward()',
      '    optimizer.step()',
      '    optimizer.zero_grad()',
      '',
    ].join('\n');

  it('counts vocabulary logits for a masked-LM head, none for token classification or the base model', async () => {
    const mib = async (model: string) => (await estimate(fineTune(model))).models[0]!.memory.estimateMiB!;
    const masked = await mib('AutoModelForMaskedLM.from_pretrained("bert-base-uncased")');
    const tokens = await mib('AutoModelForTokenClassification.from_pretrained("bert-base-uncased", num_labels=9)');
    const base = await mib('AutoModel.from_pretrained("bert-base-uncased")');
    // 16 x 512 tokens x 30,522 entries: the fp32 logits and the loss's copies, some GiB.
    assert.ok(masked - tokens > 2000, `${masked} vs ${tokens}`);
    assert.ok(Math.abs(tokens - base) < 200, `${tokens} vs ${base}`);
    // ELECTRA's discriminator (ElectraForPreTraining) scores each token once: no vocabulary logits.
    const discriminator = await mib('AutoModelForPreTraining.from_pretrained("google/electra-base-discriminator")');
    const generator = await mib('AutoModelForMaskedLM.from_pretrained("google/electra-base-discriminator")');
    assert.ok(generator - discriminator > 2000, `${generator} vs ${discriminator}`);
  });
});
