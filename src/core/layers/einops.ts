/**
 * einops patterns (`rearrange`, `repeat`, `reduce`, and the `Rearrange` / `Reduce` layers of
 * `einops.layers.torch`): the output shape from the input's and the sizes given by name. Research
 * code writes reshapes this way more often than with `view` and `permute` (vit-pytorch, lucidrains'
 * models, many diffusion and perceiver repositories). No parameters; the layers are views or copies.
 */
import type { LayerSpec } from './layerSpec';
import type { LayerArgs } from './layerArgs';
import { dimProduct, divideDim, fail, inputAt, type LayerSpecGroup } from './shapes';
import { formatShape, isBatchDim, type Dim, type TensorShape } from './tensorShape';

export type EinopsOperation = 'rearrange' | 'repeat' | 'reduce';

/** One side of a pattern: its top-level items, each a group of axis names ('1' for a unit axis) or the ellipsis. */
type Side = readonly (readonly string[] | '...')[];

function parseSide(text: string, operation: string): Side {
  const items: (string[] | '...')[] = [];
  let group: string[] | undefined;
  for (const token of text.replace(/\(/g, ' ( ').replace(/\)/g, ' ) ').split(/\s+/).filter(Boolean)) {
    if (token === '(') {
      if (group) fail(`${operation}: nested brackets in "${text}"`);
      group = [];
    } else if (token === ')') {
      if (!group) fail(`${operation}: unbalanced brackets in "${text}"`);
      items.push(group);
      group = undefined;
    } else if (token === '...' || token === '…') {
      if (group) fail(`${operation}: an ellipsis inside brackets is not supported`);
      items.push('...');
    } else if (/^([A-Za-z_][A-Za-z0-9_]*|\d+)$/.test(token)) {
      if (group) group.push(token);
      else items.push([token]);
    } else fail(`${operation}: "${token}" is not an axis name`);
  }
  if (group) fail(`${operation}: unbalanced brackets in "${text}"`);
  return items;
}

const unitOrNumber = (axis: string) => (/^\d+$/.test(axis) ? Number(axis) : undefined);

/**
 * The shape `operation(tensor of shape input, pattern, **sizes)` returns. The batch dimension may
 * sit in any axis; an axis that takes it carries it into the output (`b (h w) c` keeps it first).
 */
export function einopsShape(operation: EinopsOperation, pattern: string, input: TensorShape, sizes: Readonly<Record<string, Dim | undefined>>): TensorShape {
  const arrow = pattern.split('->');
  if (arrow.length !== 2) fail(`${operation}: the pattern "${pattern}" needs one "->"`);
  const left = parseSide(arrow[0]!, operation);
  const right = parseSide(arrow[1]!, operation);
  const ellipsisAt = left.indexOf('...');
  const explicit = left.length - (ellipsisAt >= 0 ? 1 : 0);
  if (ellipsisAt < 0 ? input.length !== left.length : input.length < explicit) {
    fail(`${operation}: "${arrow[0]!.trim()}" names ${explicit} dimensions but the input ${formatShape(input)} has ${input.length}`);
  }
  const axes = new Map<string, Dim>();
  let ellipsis: Dim[] = [];
  let dim = 0;
  for (const item of left) {
    if (item === '...') {
      const count = input.length - explicit;
      ellipsis = input.slice(dim, dim + count);
      dim += count;
      continue;
    }
    bindGroup(item, input[dim++]!, axes, sizes, operation);
  }
  const output: Dim[] = [];
  for (const item of right) {
    if (item === '...') {
      if (ellipsisAt < 0) fail(`${operation}: "..." on the right but not on the left`);
      output.push(...ellipsis);
      continue;
    }
    const dims = item.map((axis) => {
      const number = unitOrNumber(axis);
      if (number !== undefined) return number;
      const known = axes.get(axis) ?? (operation === 'repeat' ? sizes[axis] : undefined);
      if (known === undefined) fail(`${operation}: the size of axis "${axis}" is not known (give it as ${axis}=...)`);
      return known;
    });
    output.push(dims.length === 1 ? dims[0]! : dimProduct(dims, operation));
  }
  return output;
}

/** The axes of one left-side item from the input dimension it matches: one unknown axis in a group is inferred. */
function bindGroup(group: readonly string[], dim: Dim, axes: Map<string, Dim>, sizes: Readonly<Record<string, Dim | undefined>>, operation: string): void {
  if (group.length === 1) {
    const number = unitOrNumber(group[0]!);
    if (number !== undefined) {
      if (dim !== number) fail(`${operation}: a dimension of ${isBatchDim(dim) ? 'the batch' : dim} where the pattern has ${number}`);
      return;
    }
    const given = sizes[group[0]!];
    if (typeof given === 'number' && typeof dim === 'number' && given !== dim) fail(`${operation}: ${group[0]}=${given} but the dimension is ${dim}`);
    axes.set(group[0]!, dim);
    return;
  }
  let known = 1;
  const unknown: string[] = [];
  for (const axis of group) {
    const size = unitOrNumber(axis) ?? sizes[axis];
    // A size that follows the batch (`(b n)` with b=b) is the batch's part of the dimension: inferred like an unknown one.
    if (size === undefined || isBatchDim(size)) unknown.push(axis);
    else {
      known *= size;
      if (unitOrNumber(axis) === undefined) axes.set(axis, size);
    }
  }
  if (unknown.length > 1) fail(`${operation}: the sizes of ${unknown.join(' and ')} in (${group.join(' ')}) are not given`);
  if (unknown.length === 1) axes.set(unknown[0]!, divideDim(dim, known, operation, `(${group.join(' ')})`));
  else if (!isBatchDim(dim) && known !== dim) fail(`${operation}: (${group.join(' ')}) is ${known} but the dimension is ${dim}`);
}

/** The axis names a pattern uses, whose sizes a call may give by keyword. */
export function patternAxes(pattern: string): string[] {
  return [...new Set(pattern.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? [])];
}

function axisSizes(args: LayerArgs, pattern: string): Record<string, number | undefined> {
  return Object.fromEntries(patternAxes(pattern).map((axis) => [axis, args.optionalInt(-1, axis)]));
}

function einopsLayer(operation: EinopsOperation): LayerSpec {
  return {
    category: 'reshape',
    params: () => 0,
    forward: (inputs, args) => {
      const pattern = args.string(0, 'pattern', '');
      if (!pattern) fail(`${args.type} needs its pattern`);
      return einopsShape(operation, pattern, inputAt(inputs, 0, args.type), axisSizes(args, pattern));
    },
    // A Reduce by max keeps its indices' worth for backward; as Flatten, a rearrangement keeps nothing.
    savesInput: operation === 'reduce',
    savesOutput: false,
  };
}

/** `einops.layers.torch.Rearrange(pattern, **sizes)` and `Reduce(pattern, reduction, **sizes)`. */
export const einopsLayers: LayerSpecGroup = {
  Rearrange: einopsLayer('rearrange'),
  Reduce: einopsLayer('reduce'),
};
