/**
 * Gradient checkpointing (`torch.utils.checkpoint.checkpoint(block, x)`, `checkpoint_sequential`;
 * docs/layer-table.md, rule 12): the calls made inside one checkpoint call share a `checkpoint`
 * number. In the forward pass autograd keeps only the segment's input (the output of the call
 * before it, or the model's input); what the segment's calls would have saved is freed as it
 * goes. When backward reaches the segment it runs the segment's forward again, and only then
 * holds that segment's saved tensors: the step's activations are the segments' inputs plus one
 * segment's own, instead of every segment's.
 */
import type { LayerRow, LayerTable } from './layerTable';

/** The calls of one checkpointed segment: indices `start` to `end` (inclusive) of a list of calls. */
export interface CheckpointSegment {
  readonly start: number;
  readonly end: number;
}

/** Some call of the table ran inside a checkpoint. */
export function hasCheckpointedCalls(table: LayerTable): boolean {
  return table.rows.some((row) => row.checkpoint !== undefined);
}

/**
 * Per call of `calls` (the table's rows in call order, or a subset of them): the segment it lies
 * in, or undefined outside every checkpoint. Consecutive calls with the same number are one segment.
 */
export function checkpointSegments(calls: readonly LayerRow[]): (CheckpointSegment | undefined)[] {
  const segments: (CheckpointSegment | undefined)[] = calls.map(() => undefined);
  let start = 0;
  while (start < calls.length) {
    const id = calls[start]!.checkpoint;
    let end = start;
    while (id !== undefined && end + 1 < calls.length && calls[end + 1]!.checkpoint === id) end++;
    if (id !== undefined) {
      const segment = { start, end };
      for (let index = start; index <= end; index++) segments[index] = segment;
    }
    start = end + 1;
  }
  return segments;
}

/**
 * What each call keeps through the forward pass with checkpointing, from what it would keep
 * without (`kept`): a call inside a segment keeps nothing but the segment's output (when that
 * would be kept anyway), and the call before a segment keeps its output, the segment's input.
 */
export function keptThroughForward(kept: readonly boolean[], segments: readonly (CheckpointSegment | undefined)[]): boolean[] {
  return kept.map((keeps, index) => {
    const segment = segments[index];
    const next = segments[index + 1];
    if (next !== undefined && next !== segment) return true;
    return segment === undefined ? keeps : keeps && index === segment.end;
  });
}

/**
 * The block a standard architecture's row lies in, as timm's `checkpoint_seq` and transformers'
 * checkpointed layers cut it: the longest prefix of the path that ends in an index and has a module
 * below it (`blocks.3.attn.qkv` -> `blocks.3`, `layer2.0.downsample.0` -> `layer2.0`,
 * `stages.1.blocks.2.conv_dw` -> `stages.1.blocks.2`, `bert.encoder.layer.5.output.dense` ->
 * `bert.encoder.layer.5`); undefined outside every numbered block (stems, heads).
 */
export function repeatedBlockOf(path: string): string | undefined {
  const parts = path.split('.');
  for (let end = parts.length - 1; end > 0; end--) if (/^\d+$/.test(parts[end - 1]!)) return parts.slice(0, end).join('.');
  return undefined;
}

/**
 * Per row path of a standard architecture (undefined: a row to leave out), the block its own
 * checkpointing runs it in (repeatedBlockOf), or undefined. A numbered stage holding numbered
 * blocks (`stages.1` of `stages.1.blocks.0`) is no block: its own modules (a downsample between
 * stages) are not checkpointed, as timm's stages leave them out.
 */
export function checkpointedBlocks(paths: readonly (string | undefined)[]): (string | undefined)[] {
  const keys = paths.map((path) => (path === undefined ? undefined : repeatedBlockOf(path)));
  const known = [...new Set(keys.filter((key): key is string => key !== undefined))];
  const stages = new Set(known.filter((key) => known.some((other) => other.startsWith(`${key}.`))));
  return keys.map((key) => (key !== undefined && !stages.has(key) ? key : undefined));
}
