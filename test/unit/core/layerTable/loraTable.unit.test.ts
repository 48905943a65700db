import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { withLoraAdapter } from '../../../../src/core/layerTable/loraTable';
import { LAYER_TABLE_SCHEMA_VERSION, type LayerRow, type LayerTable } from '../../../../src/core/layerTable/layerTable';
import type { AdapterSetup } from '../../../../src/core/analysis/modelDescription';
import { estimate, REPO_ROOT } from '../../fixtures';

/** One ViT-style layer as the transformers catalog names it (5.x), over 197 tokens of 64, and a 3-label head. */
function vitLayer(): LayerTable {
  const linear = (p: string, out: number, inFeatures = 64): LayerRow => ({ path: p, type: 'Linear', outputShape: [197, out], activations: 197 * out, params: inFeatures * out + out, trainable: true });
  const rows: LayerRow[] = [
    { path: 'vit.embeddings.cls_token', type: 'Parameter', outputShape: null, activations: null, params: 64, trainable: true },
    { path: 'vit.layers.0.layernorm_before', type: 'LayerNorm', outputShape: [197, 64], activations: 197 * 64, params: 128, trainable: true },
    linear('vit.layers.0.attention.q_proj', 64),
    linear('vit.layers.0.attention.k_proj', 64),
    linear('vit.layers.0.attention.v_proj', 64),
    linear('vit.layers.0.attention.o_proj', 64),
    linear('vit.layers.0.mlp.fc1', 256),
    { path: 'vit.layers.0.mlp.activation_fn', type: 'GELUActivation', outputShape: [197, 256], activations: 197 * 256, params: 0, trainable: true },
    linear('vit.layers.0.mlp.fc2', 64, 256),
    { path: 'classifier', type: 'Linear', outputShape: [3], activations: 3, params: 64 * 3 + 3, trainable: true },
  ];
  const params = rows.reduce((sum, row) => sum + (row.params ?? 0), 0);
  return { schemaVersion: LAYER_TABLE_SCHEMA_VERSION, model: 'vit', inputShape: [3, 224, 224], rows, totals: { params, trainableParams: params, activations: 0 }, incomplete: false };
}

const lora = (overrides: Partial<AdapterSetup> = {}): AdapterSetup => ({ method: 'lora', rank: 8, dora: false, applied: true, ...overrides });

describe('LoRA on a layer table (PEFT get_peft_model)', () => {
  it("adapts the 4.x names a script gives (query, value) on the catalog's 5.x rows, freezing the rest but modules_to_save", () => {
    const result = withLoraAdapter(vitLayer(), lora({ targetModules: ['query', 'value'], modulesToSave: ['classifier'], dropout: 0.1 }))!;
    assert.deepEqual(result.adapted, ['vit.layers.0.attention.q_proj', 'vit.layers.0.attention.v_proj']);
    // A (8 x 64) and B (64 x 8) per adapted Linear.
    assert.equal(result.loraParams, 2 * 8 * (64 + 64));
    const rows = result.table.rows;
    const q = rows.findIndex((row) => row.path === 'vit.layers.0.attention.q_proj');
    assert.deepEqual(
      rows.slice(q, q + 4).map((row) => [row.path.slice('vit.layers.0.attention.'.length), row.type, row.outputShape, row.params, row.trainable]),
      [
        ['q_proj', 'Linear', [197, 64], 64 * 64 + 64, false],
        ['q_proj.lora_dropout.default', 'Dropout', [197, 64], 0, true],
        ['q_proj.lora_A.default', 'Linear', [197, 8], 8 * 64, true],
        ['q_proj.lora_B.default', 'Linear', [197, 64], 8 * 64, true],
      ],
    );
    assert.equal(rows.find((row) => row.path === 'classifier')?.trainable, true);
    assert.equal(rows.find((row) => row.path === 'vit.embeddings.cls_token')?.trainable, false);
    assert.equal(result.table.totals.trainableParams, result.loraParams + 64 * 3 + 3);
    assert.equal(result.table.totals.params, vitLayer().totals.params + result.loraParams);
  });

  it('adapts every Linear for "all-linear" (a modules_to_save head aside), and what PEFT adapts by default where no target is named', () => {
    const all = withLoraAdapter(vitLayer(), lora({ targetModules: 'all-linear', modulesToSave: ['classifier'] }))!;
    assert.equal(all.adapted.length, 6);
    const byDefault = withLoraAdapter(vitLayer(), lora())!;
    assert.deepEqual(byDefault.adapted.map((p) => p.split('.').at(-1)), ['q_proj', 'v_proj']);
    // Without modules_to_save the new head is frozen too, as PEFT leaves it.
    assert.equal(byDefault.table.rows.find((row) => row.path === 'classifier')?.trainable, false);
  });

  it('gives nothing where no module matches (a name the table does not have)', () => {
    assert.equal(withLoraAdapter(vitLayer(), lora({ targetModules: ['c_attn'] })), undefined);
  });

  it("reaches the estimate of the PEFT image-classification script: LoRA's parameters trained, a note, the base frozen", async () => {
    const source = readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'frameworks', 'peft_vit_lora.py'), 'utf8');
    const model = (await estimate(source)).models[0]!;
    const table = model.layerTable;
    // 24 adapted Linear layers of ViT-B (query and value of 12 layers), rank 16: 16 x (768 + 768) each.
    assert.equal(table.rows.filter((row) => row.path.endsWith('.lora_A.default')).length, 24);
    assert.ok(table.totals.trainableParams < 1_000_000 && table.totals.trainableParams > 24 * 16 * 1536);
    assert.ok(model.notes.some((note) => /LoRA on 24 Linear layers \(589\.8K parameters\); the other parameters frozen, and `classifier` \(modules_to_save\) trained whole/.test(note.message)), model.notes.map((n) => n.message).join('\n'));
    // Batch 128 in fp16: the CPU dry run (PyTorch 2.4.1) gives 9,866 MiB; every parameter trained, 13,230 MiB.
    assert.ok(model.memory.estimateMiB! < 13_230 && model.memory.estimateMiB! > 9_866, String(model.memory.estimateMiB));
  });

  it('says so where the adapter names no module of the table', async () => {
    const source = readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'frameworks', 'peft_vit_lora.py'), 'utf8').replace('target_modules=["query", "value"]', 'target_modules=["c_attn"]');
    const model = (await estimate(source)).models[0]!;
    assert.ok(model.notes.some((note) => /adapts no layer of this model's table .*every parameter is counted as trained/.test(note.message)));
    assert.equal(model.layerTable.totals.trainableParams, model.layerTable.totals.params);
  });
});
