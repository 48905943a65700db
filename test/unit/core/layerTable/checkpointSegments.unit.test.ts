import * as assert from 'node:assert/strict';
import { analyticalBytes } from '../../../../src/core/estimators/analytical';
import { replayTrainingStep, trainingStepEvents } from '../../../../src/core/estimators/trainingStep';
import type { TrainingJob } from '../../../../src/core/estimators/trainingJob';
import { checkpointSegments, hasCheckpointedCalls, keptThroughForward, repeatedBlockOf } from '../../../../src/core/layerTable/checkpointSegments';
import { LAYER_TABLE_SCHEMA_VERSION, type LayerRow, type LayerTable } from '../../../../src/core/layerTable/layerTable';
import { estimate } from '../../fixtures';

const MIB = 1024 * 1024;

/** `pairs` x (Linear(1024 -> 1024), ReLU), then Linear(1024 -> 10); rows in the segments given (by pair) are checkpointed. */
function mlp(pairs: number, segments: readonly (readonly number[])[] = []): LayerTable {
  const rows: LayerRow[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    const segment = segments.findIndex((members) => members.includes(pair));
    const mark = segment >= 0 ? { checkpoint: segment } : {};
    rows.push({ path: `${2 * pair}`, type: 'Linear', outputShape: [1024], activations: 1024, params: 1024 * 1024 + 1024, trainable: true, ...mark });
    rows.push({ path: `${2 * pair + 1}`, type: 'ReLU', outputShape: [1024], activations: 1024, params: 0, trainable: true, ...mark });
  }
  rows.push({ path: `${2 * pairs}`, type: 'Linear', outputShape: [10], activations: 10, params: 10250, trainable: true });
  const params = rows.reduce((sum, row) => sum + (row.params ?? 0), 0);
  return { schemaVersion: LAYER_TABLE_SCHEMA_VERSION, model: 'm', inputShape: [1024], rows, totals: { params, trainableParams: params, activations: 0 }, incomplete: false };
}
// Batch 1024 at fp32: every 1024-wide output is 4 MiB.
const job = (table: LayerTable): TrainingJob => ({ table, batchSize: 1024, optimizer: 'sgd', precision: 'fp32' });

describe('checkpointed segments (rule 12)', () => {
  it('groups consecutive calls with the same number, and nothing else', () => {
    const table = mlp(4, [[0, 1], [2]]);
    const segments = checkpointSegments(table.rows);
    assert.deepEqual(segments.slice(0, 4), [{ start: 0, end: 3 }, { start: 0, end: 3 }, { start: 0, end: 3 }, { start: 0, end: 3 }]);
    assert.deepEqual(segments[4], { start: 4, end: 5 });
    assert.equal(segments[6], undefined);
    assert.equal(segments[8], undefined);
    assert.ok(hasCheckpointedCalls(table));
    assert.ok(!hasCheckpointedCalls(mlp(4)));
  });

  it('keeps through the forward only the segments\' inputs and the outputs kept after them', () => {
    // not segmented, segment [1, 2], not segmented: call 0 keeps its output as the segment's input, call 1 nothing.
    const calls = [{ checkpoint: undefined }, { checkpoint: 0 }, { checkpoint: 0 }, { checkpoint: undefined }] as unknown as LayerRow[];
    assert.deepEqual(keptThroughForward([false, true, true, true], checkpointSegments(calls)), [true, false, true, true]);
    assert.deepEqual(keptThroughForward([false, true, false, true], checkpointSegments(calls)), [true, false, false, true]);
  });

  it('keeps the input and each segment\'s output instead of every ReLU\'s output', () => {
    // Without checkpointing: the input, four ReLU outputs, the head's output and the loss's log-softmax of it.
    const plain = replayTrainingStep(job(mlp(4)));
    assert.equal(plain.savedBytes, 5 * 4 * MIB + 2 * 40 * 1024);
    // Two segments of two pairs: the input and the two segments' last ReLU outputs (the second also the head's input).
    const checkpointed = replayTrainingStep(job(mlp(4, [[0, 1], [2, 3]])));
    assert.equal(checkpointed.savedBytes, 3 * 4 * MIB + 2 * 40 * 1024);
    assert.equal(checkpointed.stateBytes, plain.stateBytes);
  });

  it('holds one segment\'s saved tensors at a time in backward, beside the segments\' inputs', () => {
    // Batch 8192: 32 MiB an output, so the activations outweigh the 4 MiB weights and their gradients.
    const peak = (table: LayerTable) => replayTrainingStep({ ...job(table), batchSize: 8192 }).stats.peakAllocatedBytes;
    const none = peak(mlp(8));
    const two = peak(mlp(8, [[0, 1, 2, 3], [4, 5, 6, 7]]));
    const four = peak(mlp(8, [[0, 1], [2, 3], [4, 5], [6, 7]]));
    // Eight ReLU outputs held at the start of backward without checkpointing; with two segments of four pairs, the
    // input, the first segment's output and the second's four again; with four of two, three segments' outputs and two.
    assert.equal(none - two, 3 * 32 * MIB);
    assert.equal(four, two);
    assert.equal(peak(mlp(8, [[0, 1, 2, 3, 4, 5, 6, 7]])), none);
    // Whatever is recomputed is freed again: a step ends with the weights (and their gradients, SGD's nothing else) alone.
    const { events } = trainingStepEvents(job(mlp(8, [[0, 1], [2, 3], [4, 5], [6, 7]])), 1);
    const live = new Set<number>();
    for (const event of events) {
      if (event.kind === 'alloc') live.add(event.id);
      else live.delete(event.id);
    }
    assert.equal(live.size, 9);
  });

  it('gives the analytical model the segments\' inputs plus the largest segment', () => {
    const plain = analyticalBytes(job(mlp(8)));
    const checkpointed = analyticalBytes(job(mlp(8, [[0, 1, 2], [3, 4, 5]])));
    // Plain: the input and eight ReLU outputs, the head's 40 KiB rounded to 512 bytes. Checkpointed: the input, the
    // ReLUs of pairs 2 and 5 (segment outputs), 6 and 7, and one segment's three ReLU outputs again in backward.
    assert.equal(plain.savedBytes, 9 * 4 * MIB + 40 * 1024);
    assert.equal(checkpointed.savedBytes, (1 + 2 + 2 + 3) * 4 * MIB + 40 * 1024);
    assert.equal(checkpointed.gradientBytes, plain.gradientBytes);
  });
});

describe('an architecture\'s own checkpointing: its blocks are the segments', () => {
  it('takes the numbered block a row lies in, and none for stems and heads', () => {
    assert.equal(repeatedBlockOf('blocks.3.attn.qkv'), 'blocks.3');
    assert.equal(repeatedBlockOf('layer2.0.downsample.0'), 'layer2.0');
    assert.equal(repeatedBlockOf('stages.1.blocks.2.conv_dw'), 'stages.1.blocks.2');
    assert.equal(repeatedBlockOf('vit.encoder.layer.11.output.dense'), 'vit.encoder.layer.11');
    assert.equal(repeatedBlockOf('stem.0'), undefined);
    assert.equal(repeatedBlockOf('head.fc'), undefined);
  });

  it('transformers\' gradient_checkpointing_enable() checkpoints each encoder layer of a model trained in a plain loop', async () => {
    const script = (enable: boolean) =>
      [
        'import torch',
        'from transformers import ViTForImageClassification',
        'model = ViTForImageClassification.from_pretrained("google/vit-base-patch16-224")',
        ...(enable ? ['model.gradient_checkpointing_enable()'] : []),
        'optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)',
        'pixels = torch.randn(64, 3, 224, 224)',
        'for step in range(100):',
        '    model(pixel_values=pixels).logits.sum().backward()',
        '    optimizer.step()',
        '',
      ].join('\n');
    const [plain] = (await estimate(script(false))).models;
    const [checkpointed] = (await estimate(script(true))).models;
    const segments = new Set(checkpointed!.layerTable.rows.flatMap((row) => (row.checkpoint === undefined ? [] : [row.checkpoint])));
    assert.equal(segments.size, 12);
    assert.ok(plain!.layerTable.rows.every((row) => row.checkpoint === undefined));
    assert.ok(checkpointed!.memory.estimateMiB! < 0.75 * plain!.memory.estimateMiB!, `${checkpointed!.memory.estimateMiB} vs ${plain!.memory.estimateMiB}`);
  });
});
