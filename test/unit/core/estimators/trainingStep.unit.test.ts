import * as assert from 'node:assert/strict';
import { activationScales, forwardTransients, isAttentionMatrix, replayTrainingStep, trainingStepEvents } from '../../../../src/core/estimators/trainingStep';
import type { TrainingJob } from '../../../../src/core/estimators/trainingJob';
import { LAYER_TABLE_SCHEMA_VERSION, type LayerRow, type LayerTable } from '../../../../src/core/layerTable/layerTable';

const MIB = 1024 * 1024;

function table(rows: LayerRow[], inputShape: number[]): LayerTable {
  const params = rows.reduce((s, r) => s + (r.params ?? 0), 0);
  return { schemaVersion: LAYER_TABLE_SCHEMA_VERSION, model: 'm', inputShape, rows, totals: { params, trainableParams: params, activations: 0 }, incomplete: false };
}

// Linear(1024 -> 1024), ReLU, Linear(1024 -> 10): 4 MiB of fp32 weights in the first layer.
const mlp = table(
  [
    { path: '0', type: 'Linear', outputShape: [1024], activations: 1024, params: 1024 * 1024, trainable: true },
    { path: '1', type: 'ReLU', outputShape: [1024], activations: 1024, params: 0, trainable: true },
    { path: '2', type: 'Linear', outputShape: [10], activations: 10, params: 10240, trainable: true },
  ],
  [1024],
);
const job = (overrides: Partial<TrainingJob> = {}): TrainingJob => ({ table: mlp, batchSize: 1024, optimizer: 'adam', precision: 'fp32', ...overrides });

/** The MLP with the first Linear frozen (a fixed feature extractor) or every layer frozen. */
const frozen = (paths: readonly string[]): LayerTable => ({ ...mlp, rows: mlp.rows.map((row) => (paths.includes(row.path) ? { ...row, trainable: false } : row)) });

describe('training step replay with frozen parameters', () => {
  it('gives frozen weights no gradient and no optimizer state', () => {
    const replay = replayTrainingStep(job({ table: frozen(['0']) }));
    const weights = 4 * MIB + 10240 * 4;
    // All weights, then gradient and two Adam moments of the head alone.
    assert.equal(replay.stateBytes, weights + 3 * 10240 * 4);
  });

  it('keeps nothing before the first trained layer but that layer\'s input', () => {
    // Linear(frozen) -> ReLU -> Linear(trained): the ReLU output is kept as the head's input, then the logits and the
    // loss's fp32 log-softmax of them; the input batch is not saved.
    const replay = replayTrainingStep(job({ table: frozen(['0']) }));
    assert.equal(replay.savedBytes, 4 * MIB + 2 * 1024 * 10 * 4);
    assert.ok(replay.stats.peakAllocatedBytes < replayTrainingStep(job()).stats.peakAllocatedBytes);
  });

  it("keeps no input for a frozen Linear after the trained layers start (autograd saves its weight alone), but does inside a measured part", () => {
    // Linear(trained) -> GELU -> Linear(frozen) -> Linear(trained): the GELU's output is the frozen Linear's input.
    const rows: LayerRow[] = [
      { path: 'a', type: 'Linear', outputShape: [256], activations: 256, params: 256 * 64, trainable: true },
      { path: 'act', type: 'GELU', outputShape: [256], activations: 256, params: 0, trainable: true },
      { path: 'frozen', type: 'Linear', outputShape: [32], activations: 32, params: 256 * 32, trainable: false },
      { path: 'head', type: 'Linear', outputShape: [10], activations: 10, params: 320, trainable: true },
    ];
    const saved = (tableRows: LayerRow[], measured = false) =>
      replayTrainingStep({ table: { ...table(tableRows, [64]), ...(measured ? { measuredActivations: [{ path: '', savedBytesPerSample: 4 * (64 + 256 + 32 + 10), source: 'test' }] } : {}) }, batchSize: 8, optimizer: 'adam', precision: 'fp32' }).savedBytes;
    const trained = rows.map((row) => ({ ...row, trainable: true }));
    assert.equal(saved(trained) - saved(rows), 8 * 256 * 4);
    assert.equal(saved(trained, true), saved(rows, true));
    // A Linear subclass with trained parameters of its own (a hand-written LoRA) uses its input in them: kept.
    const handWritten: LayerRow[] = [{ path: 'frozen.lora_A', type: 'Parameter', outputShape: null, activations: 0, params: 256 * 4, trainable: true }, ...rows];
    assert.equal(saved(handWritten), saved(trained));
  });

  it('frees every tensor of the step when nothing trains', () => {
    const { events, savedBytes } = trainingStepEvents(job({ table: frozen(['0', '2']) }));
    const live = new Set<number>();
    for (const e of events) {
      if (e.kind === 'alloc') live.add(e.id);
      else live.delete(e.id);
    }
    assert.equal(live.size, 2, 'the two weights');
    assert.equal(savedBytes, 0);
  });

  it('keeps nothing of a call made without autograd, before or after the trained layers, and gives its parameters no gradient', () => {
    // The first Linear under torch.no_grad() is the frozen prefix again.
    const noGradFirst: LayerTable = { ...mlp, rows: mlp.rows.map((row) => (row.path === '0' ? { ...row, noGrad: true as const } : row)) };
    assert.deepEqual(
      (({ stateBytes, savedBytes }) => ({ stateBytes, savedBytes }))(replayTrainingStep(job({ table: noGradFirst }))),
      (({ stateBytes, savedBytes }) => ({ stateBytes, savedBytes }))(replayTrainingStep(job({ table: frozen(['0']) }))),
    );
    // A teacher's Linear run without autograd after the student's head: its 40 MiB output is not kept, its weights get no gradient.
    const teacher = { path: 'teacher', type: 'Linear', outputShape: [10240], activations: 10240, params: 1024 * 10240, trainable: true, noGrad: true as const };
    const withTeacher = table([...mlp.rows, teacher], [1024]);
    const replay = replayTrainingStep(job({ table: withTeacher }));
    assert.equal(replay.savedBytes, replayTrainingStep(job()).savedBytes);
    assert.equal(replay.stateBytes, replayTrainingStep(job()).stateBytes + 1024 * 10240 * 4);
  });

  it('gives optimizer state to the parameters the optimizer holds only, gradients to every trained one', () => {
    const headOnly = replayTrainingStep(job({ optimizedPaths: ['2'] }));
    const weights = 4 * MIB + 10240 * 4;
    // Weights and gradients of both layers, Adam's two moments of the head alone.
    assert.equal(headOnly.stateBytes, 2 * weights + 2 * 10240 * 4);
    assert.ok(headOnly.stats.peakAllocatedBytes < replayTrainingStep(job()).stats.peakAllocatedBytes);
  });

  it('models an unfrozen table exactly as before: the first rows keep what they keep even without parameters', () => {
    const withDropout = table([{ path: 'drop', type: 'Dropout', outputShape: [1024], activations: 1024, params: 0, trainable: true }, ...mlp.rows], [1024]);
    const replay = replayTrainingStep(job({ table: withDropout }));
    // Dropout's mask (1 byte per element) is kept although no parameter comes before it.
    assert.ok(replay.savedBytes > replayTrainingStep(job()).savedBytes);
  });
});

describe('training step replay', () => {
  it('frees everything but weights and optimizer state by the end of a step', () => {
    const { events } = trainingStepEvents(job());
    const live = new Set<number>();
    for (const e of events) {
      if (e.kind === 'alloc') live.add(e.id);
      else live.delete(e.id);
    }
    // Two weight tensors, and Adam's two moments of each.
    assert.equal(live.size, 6);
  });

  it('counts weights, gradients and two Adam moments as state, and what backward keeps as saved', () => {
    const replay = replayTrainingStep(job());
    const weights = 4 * MIB + 10240 * 4;
    assert.equal(replay.stateBytes, 4 * weights);
    // The input (4 MiB, Linear saves it), ReLU's output (4 MiB: ReLU saves it, Linear saves its
    // input), the logits (last row) and the loss's log-softmax of them (fp32); the first Linear's
    // output is freed once ReLU has run.
    assert.equal(replay.savedBytes, 4 * MIB + 4 * MIB + 2 * 1024 * 10 * 4);
    assert.ok(replay.stats.peakReservedBytes >= replay.stats.peakAllocatedBytes);
    assert.ok(replay.stats.peakAllocatedBytes >= replay.stateBytes);
  });

  it('needs less with SGD than with Adam, and more at a larger batch', () => {
    const peak = (j: TrainingJob) => replayTrainingStep(j).stats.peakReservedBytes;
    assert.ok(peak(job({ optimizer: 'sgd' })) < peak(job()));
    assert.ok(peak(job({ batchSize: 4096 })) > peak(job()));
  });

  it('leaves fused attention matrices out', () => {
    const attention: LayerRow = { path: 'blocks.0.attn.attn_drop', type: 'Dropout', outputShape: [12, 197, 197], activations: 12 * 197 * 197, params: 0, trainable: true };
    assert.equal(isAttentionMatrix(attention), true);
    assert.equal(isAttentionMatrix({ ...attention, path: 'blocks.0.drop' }), false);
    assert.equal(isAttentionMatrix({ ...attention, outputShape: [12, 197, 64] }), false);
    // A library part measured with fused attention (a timm model's) runs it fused.
    const withAttention: LayerTable = { ...table([...mlp.rows.slice(0, 2), attention, mlp.rows[2]!], [1024]), measuredActivations: [{ path: 'blocks', savedBytesPerSample: 1, source: 'test' }] };
    const replay = replayTrainingStep(job({ table: withAttention }));
    assert.equal(replay.attentionElements, 12 * 197 * 197);
    assert.equal(replay.eagerAttentionBytes, 0);
    assert.equal(replay.stats.peakReservedBytes, replayTrainingStep(job()).stats.peakReservedBytes);
  });

  it("counts the script's own attention and MultiheadAttention rows with eagerAttention as eager: scores, dropout's output and mask", () => {
    const attention: LayerRow = { path: 'blocks.0.attn.attn_drop', type: 'Dropout', outputShape: [12, 197, 197], activations: 12 * 197 * 197, params: 0, trainable: true };
    const encoder: LayerRow = { path: 'attn', type: 'MultiheadAttention', outputShape: [64, 1024], activations: 64 * 1024, params: 0, trainable: true, eagerAttention: { elements: 8 * 64 * 64, dropout: false } };
    const own = replayTrainingStep(job({ table: table([...mlp.rows.slice(0, 2), attention, mlp.rows[2]!], [1024]) }));
    assert.equal(own.attentionElements, 0);
    assert.equal(own.eagerAttentionBytes, 12 * 197 * 197 * 9);
    const nn = replayTrainingStep(job({ table: table([encoder, ...mlp.rows], [64, 1024]), precision: 'fp16-mixed' }));
    // Autocast: softmax's fp32 output and the matmul's half-precision copy of it.
    assert.equal(nn.eagerAttentionBytes, 8 * 64 * 64 * 6);
    // A library that calls the fused kernels (timm's rows read alone): none of it is eager.
    const fused = replayTrainingStep(job({ table: table([...mlp.rows.slice(0, 2), attention, mlp.rows[2]!], [1024]), fusedAttention: true }));
    assert.deepEqual([fused.attentionElements, fused.eagerAttentionBytes], [12 * 197 * 197, 0]);
  });

  describe('with the activations autograd measured (measuredActivations)', () => {
    // What the table keeps per sample: the input (1024 floats), ReLU's output (1024) and the logits (10).
    const rowsKeep = (1024 + 1024 + 10) * 4;
    const measured = (bytes: number, path = ''): LayerTable => ({ ...mlp, measuredActivations: [{ path, savedBytesPerSample: bytes, source: 'test' }] });

    it('sizes what the part keeps to the measured figure', () => {
      const plain = replayTrainingStep(job());
      const doubled = replayTrainingStep(job({ table: measured(2 * rowsKeep) }));
      // The input batch is the model's own and is not scaled; the rows' kept outputs double.
      assert.ok(Math.abs(doubled.savedBytes - (plain.savedBytes + (1024 + 10) * 4 * 1024)) < 3 * 512, `${doubled.savedBytes} vs ${plain.savedBytes}`);
      // Everything the model's forward keeps is measured; the loss's log-softmax (outside the model) is not.
      assert.equal(doubled.measuredSavedBytes, doubled.savedBytes - 1024 * 10 * 4);
      assert.equal(plain.measuredSavedBytes, 0);
      assert.ok(doubled.stats.peakReservedBytes > plain.stats.peakReservedBytes);
      assert.deepEqual(activationScales(measured(rowsKeep), mlp.rows, [false, true, true]).scales.map((f) => Math.round(f * 1e9) / 1e9), [1, 1, 1]);
    });

    it('scales only the rows under the measured path', () => {
      const nested = table(
        [
          { path: 'backbone.0', type: 'Linear', outputShape: [1024], activations: 1024, params: 1024 * 1024, trainable: true },
          { path: 'backbone.1', type: 'ReLU', outputShape: [1024], activations: 1024, params: 0, trainable: true },
          { path: 'head', type: 'Linear', outputShape: [10], activations: 10, params: 10240, trainable: true },
        ],
        [1024],
      );
      // backbone keeps ReLU's output alone (its input is the model's, not the part's): 4,096 bytes.
      const { scales, measured: under, wholeModel } = activationScales({ ...nested, measuredActivations: [{ path: 'backbone', savedBytesPerSample: 3 * 4096, source: 'test' }] }, nested.rows, [false, true, true]);
      assert.deepEqual(scales, [3, 3, 1]);
      assert.deepEqual(under, [true, true, false]);
      assert.equal(wholeModel, false);
      const replay = replayTrainingStep(job({ table: { ...nested, measuredActivations: [{ path: 'backbone', savedBytesPerSample: 3 * 4096, source: 'test' }] } }));
      assert.ok(replay.measuredSavedBytes > 0 && replay.measuredSavedBytes < replay.savedBytes);
    });

    describe("a frozen part's forward at its fullest (forwardPeakBytesPerSample)", () => {
      // The backbone (Linear, ReLU) frozen, the head trained: the replay holds at most the Linear's and the ReLU's outputs at
      // once. It saves the ReLU's output for the head, as its rows say (scale 1).
      const probe = (peak: number | undefined): LayerTable => ({
        ...frozen(['0']),
        rows: frozen(['0']).rows.map((row) => ({ ...row, path: row.path === '2' ? 'head' : `backbone.${row.path}` })),
        measuredActivations: [{ path: 'backbone', savedBytesPerSample: 1024 * 4, ...(peak === undefined ? {} : { forwardPeakBytesPerSample: peak }), source: 'test' }],
      });
      const held = 2 * 1024 * 4;

      it('allocates what the measured forward holds beyond the rows, for a moment, where the rows hold most', () => {
        const plain = replayTrainingStep(job({ table: probe(undefined) }));
        const measured = replayTrainingStep(job({ table: probe(3 * held) }));
        // Weights, the batch and the two outputs, then 2 x 8 KiB per sample more beside them: 16 MiB at batch 1,024.
        assert.equal(measured.stats.peakAllocatedBytes - plain.stats.peakAllocatedBytes, 2 * held * 1024);
        // Nothing more is kept for backward.
        assert.equal(measured.savedBytes, plain.savedBytes);
        const events = trainingStepEvents(job({ table: probe(3 * held) })).events;
        const transient = events.findIndex((event) => event.kind === 'alloc' && event.bytes === 2 * held * 1024);
        assert.deepEqual(events[transient + 1], { kind: 'free', id: (events[transient] as { id: number }).id });
      });

      it('adds nothing where the rows already hold as much, or the part is recorded from its first call', () => {
        const table = probe(held);
        assert.equal(forwardTransients(table, table.rows, [false, false, true], () => 4 * 1024 * 1024, 1024).size, 0);
        assert.equal(replayTrainingStep(job({ table: probe(held) })).stats.peakAllocatedBytes, replayTrainingStep(job({ table: probe(undefined) })).stats.peakAllocatedBytes);
        const trained = { ...probe(3 * held), rows: probe(3 * held).rows.map((row) => ({ ...row, trainable: true })) };
        assert.equal(forwardTransients(trained, trained.rows, [true, true, true], () => 4 * 1024 * 1024, 1024).size, 0);
      });

      it('holds the fp32 figure under autocast (its residual stream and norms stay fp32), half of it in a model cast to half', () => {
        const table = probe(3 * held);
        const replay = (precision: TrainingJob['precision']) => trainingStepEvents({ table, batchSize: 1024, optimizer: 'sgd', precision }).events;
        const transient = (precision: TrainingJob['precision']) => Math.max(...replay(precision).filter((event) => event.kind === 'alloc').map((event) => (event as { bytes: number }).bytes));
        // The rows' two outputs are half under both (4 MiB at batch 1,024); the figure is whole under autocast, halved in half.
        assert.equal(transient('fp16-mixed'), 3 * held * 1024 - (held * 1024) / 2);
        assert.equal(transient('fp16'), 1.5 * held * 1024 - (held * 1024) / 2);
      });
    });

    it('ignores a part with no rows or no bytes', () => {
      assert.deepEqual(activationScales(measured(rowsKeep, 'absent'), mlp.rows, [true, true, true]).scales, [1, 1, 1]);
      assert.deepEqual(activationScales(measured(0), mlp.rows, [true, true, true]).scales, [1, 1, 1]);
    });
  });
});

describe('training step replay: the loss over the output', () => {
  // A language model's head: 512-wide hidden states to a 50,000-token vocabulary, 4 x 1024 tokens.
  const lm = table(
    [
      { path: 'embed', type: 'Embedding', outputShape: [1024, 512], activations: 1024 * 512, params: 50_000 * 512, trainable: true },
      { path: 'head', type: 'Linear', outputShape: [1024, 50_000], activations: 1024 * 50_000, params: 512 * 50_000, trainable: true },
    ],
    [1024],
  );
  const logits = 4 * 1024 * 50_000;

  it('keeps the fp32 log-softmax for backward, and its gradients are fp32 whatever the precision', () => {
    const mixed = replayTrainingStep({ table: lm, batchSize: 4, optimizer: 'sgd', precision: 'bf16-mixed' });
    // Saved: the token ids (the batch, 4 bytes), the head's bf16 copy of the embedding's fp32 output and of its own
    // weights (autocastBytes.ts), its bf16 logits, then the loss's fp32 log-softmax.
    assert.equal(mixed.savedBytes, 4 * 1024 * 4 + 4 * 1024 * 512 * 2 + 512 * 50_000 * 2 + logits * 2 + logits * 4);
    // At the start of backward: the bf16 logits, the log-softmax and the two fp32 gradients of the loss together.
    // (The weights are there too, fp32; their gradients not yet.)
    const weights = 2 * 50_000 * 512 * 4;
    assert.ok(mixed.stats.peakAllocatedBytes >= weights + logits * (2 + 4 + 4 + 4), `${mixed.stats.peakAllocatedBytes}`);
  });

  it('counts an fp32 output gradient once: it is the log-softmax input gradient', () => {
    const fp32 = trainingStepEvents({ table: lm, batchSize: 4, optimizer: 'sgd', precision: 'fp32' }, 1).events;
    const sizes = fp32.filter((event) => event.kind === 'alloc' && event.bytes === logits * 4).length;
    // The logits, the log-softmax, its gradient and the logits' gradient.
    assert.equal(sizes, 4);
  });
});
