import * as assert from 'node:assert/strict';
import { DryRunOutputError, parseDryRunOutput } from '../../../../src/core/dryRun/dryRunTrace';
import { replayDryRun } from '../../../../src/core/dryRun/dryRunReplay';
import { CONTEXT_MIB } from '../../../../src/core/estimators/analytical';
import { convolutionKind, inputBytes, outputBytes, workspaceWith } from '../../../../src/core/dryRun/convolutionWorkspace';
import { cudnnCaveats, benchmarkCaveats, capacityCaveats, FITTED_WORKSPACE } from '../../../../src/core/dryRun/cudnnWorkspace';

const MIB = 1024 * 1024;

describe('dry run trace', () => {
  it('reads the harness line after whatever the script printed, events in order with their phases', () => {
    const stdout = `epoch 1 loss {"not": json\n${JSON.stringify({ ok: true, steps: 3, cudnn: false, seconds: 0.25, torch: '1.13.0', events: [[1, 4096, 0], [2, 512, 1], [-2], [3, 100, 3]], notes: [] })}\n`;
    const trace = parseDryRunOutput(stdout);
    assert.equal(trace.ok, true);
    assert.equal(trace.steps, 3);
    assert.deepEqual(trace.events, [
      { kind: 'alloc', id: 1, bytes: 4096, phase: 'setup' },
      { kind: 'alloc', id: 2, bytes: 512, phase: 'forward' },
      { kind: 'free', id: 2 },
      { kind: 'alloc', id: 3, bytes: 100, phase: 'optimizer' },
    ]);
  });

  it('refuses hostile or garbled traces with a plain error, never an exception of another kind', () => {
    const line = (events: unknown) => JSON.stringify({ ok: true, steps: 1, events });
    const cases: Array<[string, RegExp]> = [
      ['', /printed no result/],
      ['{oops', /not JSON/],
      ['{"events": 5}', /not a list/],
      [line([[1, -5, 1]]), /no size in bytes/],
      [line([[1, 2 ** 41, 1]]), /no size in bytes/],
      [line([[1, 10, 9]]), /no phase/],
      [line([[-1]]), /frees tensor 1, which is not alive/],
      [line([[1, 10, 1], [1, 10, 1]]), /allocates tensor 1 twice/],
      [line([['1', 10, 1]]), /no tensor id/],
    ];
    for (const [stdout, message] of cases) assert.throws(() => parseDryRunOutput(stdout), (error: unknown) => error instanceof DryRunOutputError && message.test(error.message), stdout);
  });

  it('keeps the error text short and free of control characters', () => {
    const trace = parseDryRunOutput(JSON.stringify({ ok: false, error: `\u001b[31mboom\u0007${'x'.repeat(1000)}` }));
    assert.equal(trace.ok, false);
    assert.ok(trace.error!.startsWith('boom'));
    assert.ok(trace.error!.length <= 400);
  });
});

describe('dry run replay', () => {
  it('adds the context to the allocator peak, larger with cuDNN, and names the phase of the peak', () => {
    const events = [[1, 30 * MIB, 0], [2, 50 * MIB, 1], [3, 10 * MIB, 2], [-2], [4, 5 * MIB, 3]];
    const mlp = replayDryRun(parseDryRunOutput(JSON.stringify({ ok: true, steps: 1, events, cudnn: false })));
    // 30 MiB and 50 MiB segments (rounded to 2 MiB), then 10 MiB: a 10 MiB segment of its own (>= 10 MiB is rounded, not 20).
    assert.equal(mlp.peakReservedMiB, 90);
    assert.equal(mlp.peakAllocatedMiB, 90);
    assert.equal(mlp.peakPhase, 'backward');
    assert.equal(mlp.predictedMiB, 90 + CONTEXT_MIB.withoutCudnn);
    assert.deepEqual(mlp.breakdown.livePerPhaseMiB, { setup: 30, forward: 50, backward: 10 });
    const cnn = replayDryRun(parseDryRunOutput(JSON.stringify({ ok: true, steps: 1, events, cudnn: true })));
    assert.equal(cnn.predictedMiB - mlp.predictedMiB, CONTEXT_MIB.withCudnn - CONTEXT_MIB.withoutCudnn);
  });

  it('counts a freed block the allocator keeps cached: reserved stays above allocated', () => {
    // 5 MiB from a 20 MiB segment, freed; then 25 MiB, which the cached 20 MiB cannot serve: a
    // 26 MiB segment of its own, not split (the 1 MiB rest is too small to keep apart): 46 MiB
    // reserved, 26 handed out, the cached 20 MiB idle.
    const figure = replayDryRun(parseDryRunOutput(JSON.stringify({ ok: true, steps: 1, events: [[1, 5 * MIB, 1], [-1], [2, 25 * MIB, 1]] })));
    assert.equal(figure.peakReservedMiB, 46);
    assert.equal(figure.peakAllocatedMiB, 26);
    assert.equal(figure.breakdown.cachedMiB, 20);
  });

  it("gives each convolution cuDNN's workspace for the call: it raises the peak only when no cached block holds it", () => {
    // A 3x3 convolution on a 4 MiB fp32 input (1 x 16 x 256 x 256), its 4 MiB output at event 1.
    const conv = [1, 1, 0, 1, 16, 256, 256, 16, 3, 3, 1, 1, 1, 4];
    const events = [[1, 4 * MIB, 1], [2, 4 * MIB, 1], [-1]];
    const trace = parseDryRunOutput(JSON.stringify({ ok: true, steps: 1, events, cudnn: true, convolutions: [conv] }));
    assert.equal(trace.convolutions.length, 1);
    assert.equal(convolutionKind(trace.convolutions[0]!), 'spatial');
    const without = replayDryRun(trace);
    const withWorkspace = replayDryRun(trace, workspaceWith(FITTED_WORKSPACE));
    // Input and output share one 20 MiB segment; the workspace (the input's size and twice the
    // output's, 12 MiB) fills its rest exactly.
    assert.equal(without.peakReservedMiB, 20);
    assert.equal(withWorkspace.peakReservedMiB, 20);
    assert.equal(withWorkspace.peakAllocatedMiB, 20);
    // Four times the input's size: the 16 MiB workspace takes the segment's rest, so the output
    // needs a segment of its own while it is held.
    const larger = replayDryRun(trace, workspaceWith({ ...FITTED_WORKSPACE, spatial: { input: 4, output: 0 } }));
    assert.equal(larger.peakReservedMiB, 40);
    assert.equal(larger.peakAllocatedMiB, 24);
    assert.equal(larger.workspaceFallbacks, 0);
    // On a GPU with room for the tensors but not for them and that workspace (context + 30 MiB), the
    // output comes first and cuDNN runs an algorithm that needs less: the peak is the tensors'.
    const tight = replayDryRun(trace, workspaceWith({ ...FITTED_WORKSPACE, spatial: { input: 4, output: 0 } }), { gpuMemoryMiB: CONTEXT_MIB.withCudnn + 30 });
    assert.equal(tight.peakReservedMiB, 20);
    assert.equal(tight.workspaceFallbacks, 1);
    assert.equal(tight.outOfMemory, false);
    assert.match(capacityCaveats(tight, CONTEXT_MIB.withCudnn + 30).join(' '), /^Near the limit of the GPU's 1\.8 GiB: in 1 convolution call of the step the workspace of cuDNN's fastest algorithm would not fit/);
    assert.deepEqual(capacityCaveats(larger, undefined), []);
    // A GPU without room for the tensors themselves: out of memory, and no fallback to speak of.
    const tooSmall = replayDryRun(trace, workspaceWith(FITTED_WORKSPACE), { gpuMemoryMiB: CONTEXT_MIB.withCudnn + 10 });
    assert.equal(tooSmall.outOfMemory, true);
    assert.match(capacityCaveats(tooSmall, CONTEXT_MIB.withCudnn + 10).join(' '), /^Out of memory: the step's tensors alone do not fit in the GPU's 1\.8 GiB/);
  });

  it('fills the card, not out of memory, where only the cache the workspaces left makes the tensors not fit', () => {
    // Input and output share a 20 MiB segment; a 30 MiB workspace gets a segment of its own, and a
    // 14 MiB tensor then splits it once freed, so a 20 MiB one finds no room in 60 MiB. Without the
    // workspace the tensors take 54 MiB.
    const events = [[1, 4 * MIB, 1], [2, 4 * MIB, 1], [3, 14 * MIB, 1], [4, 20 * MIB, 1]];
    const trace = parseDryRunOutput(JSON.stringify({ ok: true, steps: 1, events, cudnn: true, convolutions: [[1, 1, 0, 1, 16, 256, 256, 16, 3, 3, 1, 1, 1, 4]] }));
    const gpuMemoryMiB = CONTEXT_MIB.withCudnn + 60;
    const fixed = () => 30 * MIB;
    assert.equal(replayDryRun(trace, fixed).peakReservedMiB, 70);
    assert.equal(replayDryRun(trace, undefined, { gpuMemoryMiB }).peakReservedMiB, 54);
    const figure = replayDryRun(trace, fixed, { gpuMemoryMiB });
    assert.deepEqual([figure.predictedMiB, figure.peakReservedMiB, figure.outOfMemory, figure.workspaceFallbacks], [gpuMemoryMiB, 60, false, 1]);
  });

  it('sizes the output by the stride: a strided 1x1 convolution writes a quarter of its input', () => {
    const trace = parseDryRunOutput(JSON.stringify({ ok: true, events: [[1, 10, 1]], convolutions: [[0, 1, 1, 2, 64, 32, 32, 64, 1, 1, 2, 2, 1, 2]] }));
    assert.equal(inputBytes(trace.convolutions[0]!), 2 * 64 * 32 * 32 * 2);
    assert.equal(outputBytes(trace.convolutions[0]!), (2 * 64 * 32 * 32 * 2) / 4);
  });

  it('warns where the workspace rule falls short: grouped convolutions at a small batch, not a dense network or a large batch', () => {
    const trace = (batch: number, groups: number) => parseDryRunOutput(JSON.stringify({ ok: true, events: [[1, 10, 1]], cudnn: true, convolutions: [[0, 1, 0, batch, 64, 56, 56, 64, 3, 3, 1, 1, groups, 4]] }));
    assert.match(cudnnCaveats(trace(8, 64)).join(' '), /^Grouped or depthwise convolutions at batch 8: .*9% took over a quarter more than the dry run says/);
    assert.deepEqual(cudnnCaveats(trace(8, 1)), []);
    assert.deepEqual(cudnnCaveats(trace(32, 64)), []);
  });

  it('says what cudnn.benchmark does to nvidia-smi where the script leaves it on and convolutions run', () => {
    const trace = (benchmark: unknown, convolutions: unknown[]) => parseDryRunOutput(JSON.stringify({ ok: true, events: [[1, 10, 1]], cudnn: true, cudnnBenchmark: benchmark, convolutions }));
    const conv = [0, 1, 0, 8, 64, 56, 56, 64, 3, 3, 1, 1, 1, 4];
    assert.match(benchmarkCaveats(trace(true, [conv])).join(' '), /^The script turns on cudnn\.benchmark: .*nvidia-smi may show more than this figure \(up to the whole GPU\)/);
    assert.deepEqual(benchmarkCaveats(trace(false, [conv])), []);
    assert.deepEqual(benchmarkCaveats(trace('yes', [conv])), [], 'only a JSON true');
    assert.deepEqual(benchmarkCaveats(trace(true, [])), [], 'no convolution, no cuDNN algorithm to try');
  });

  it('leaves out convolution records that do not make sense', () => {
    // Past the events, no groups, not numbers, an unknown phase, a stride of 0, a shape no GPU holds.
    const bad = [[99, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4], [0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 4], [0, 1, 0, 'x'], [0, 9, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4], [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 4], [0, 1, 0, 2 ** 20, 2 ** 20, 2 ** 10, 2 ** 10, 1, 1, 1, 1, 1, 1, 4]];
    assert.equal(parseDryRunOutput(JSON.stringify({ ok: true, events: [[1, 10, 1]], convolutions: bad })).convolutions.length, 0);
  });
});
