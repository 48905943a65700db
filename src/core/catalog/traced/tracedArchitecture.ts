/** A CatalogArchitecture backed by a traced model's data (tracedData.ts, evaluate.ts). */
import type { CatalogArchitecture, CatalogLayer, CatalogLibrary, CatalogTable } from '../catalog';
import { CatalogInputError } from '../catalog';
import { instantiateVariant, tracedParams, tracedTable, type TracedModel } from './evaluate';
import { tracedChildNames, tracedPartTable } from './tracedPart';
import type { OptionValue, TracedBlob, TracedVariant } from './tracedData';

export interface TracedArchitectureSpec {
  readonly library: CatalogLibrary;
  readonly name: string;
  readonly className: string;
  readonly source: string;
  readonly blob: TracedBlob;
  /** Which variant of the blob (`{ aux_logits: false }`). */
  readonly when: Readonly<Record<string, OptionValue>>;
  /** Values of the symbolic numbers: num_classes, image_size. */
  readonly values: Readonly<Record<string, number>>;
  readonly defaultShape: readonly number[];
  /** How messages name the model: `inception_v3 (aux_logits=False)`. */
  readonly label: string;
  /** Notes every table carries (how the table was built, options accepted without effect). */
  readonly notes: readonly string[];
  /** What autograd saves per sample at a sample's size, where it was measured for this variant. */
  readonly savedActivations?: (sample: readonly number[]) => CatalogTable['savedActivations'];
  /** The one image size the model takes (vit's image_size), where it has one. */
  readonly fixedSize?: number;
  /** Name of the option that sets fixedSize, for the message. */
  readonly fixedSizeOption?: string;
}

export function findVariant(blob: TracedBlob, when: Readonly<Record<string, OptionValue>>): TracedVariant | undefined {
  return blob.variants.find((v) => {
    const keys = new Set([...Object.keys(v.when), ...Object.keys(when)]);
    return [...keys].every((k) => v.when[k] === when[k]);
  });
}

export function tracedArchitecture(spec: TracedArchitectureSpec): CatalogArchitecture {
  const variant = findVariant(spec.blob, spec.when);
  if (!variant) throw new Error(`catalog data for ${spec.name} has no variant ${JSON.stringify(spec.when)}`);
  const model = instantiateVariant(variant, spec.values, spec.label);
  const params = tracedParams(model);
  let smallest: number | null | undefined;
  return {
    library: spec.library,
    name: spec.name,
    className: spec.className,
    params,
    input: { kind: 'image', defaultShape: spec.defaultShape },
    source: spec.source,
    layerAt(path: string): CatalogLayer | undefined {
      const module = model.modules.find((m) => m.path === path);
      return module && { type: module.type, args: [], kwargs: module.kwargs };
    },
    partTable(path: string, sample: readonly number[]): CatalogTable {
      const { rows, rowInputs, output } = tracedPartTable(model, path, sample);
      return { inputShape: [...sample], rows, rowInputs, ...(output ? { output } : {}), notes: [] };
    },
    childNames: (path: string) => tracedChildNames(model, path),
    table(sample: readonly number[]): CatalogTable {
      checkSample(sample, spec);
      try {
        const { rows, rowInputs, output } = tracedTable(model, sample);
        const saved = spec.savedActivations?.(sample);
        return { inputShape: [...sample], rows, rowInputs, ...(output ? { output } : {}), notes: spec.notes, ...(saved ? { savedActivations: saved } : {}) };
      } catch (error) {
        if (!(error instanceof CatalogInputError) || sample[0] !== spec.defaultShape[0]) throw error;
        smallest ??= smallestSquare(model, spec.defaultShape[0]!);
        if (smallest === null || smallest <= Math.min(sample[1]!, sample[2]!)) throw error;
        throw new CatalogInputError(`${error.message} (the smallest square image ${spec.label} takes is ${smallest}x${smallest})`);
      }
    },
  };
}

function checkSample(sample: readonly number[], spec: TracedArchitectureSpec): void {
  if (sample.length !== 3 || !sample.every((d) => Number.isInteger(d) && d > 0)) {
    throw new CatalogInputError(`${spec.label} takes images (channels, height, width), such as ${spec.defaultShape.join('x')}; not [${sample.join(', ')}]`);
  }
  const size = spec.fixedSize;
  if (size !== undefined && (sample[1] !== size || sample[2] !== size)) {
    const option = spec.fixedSizeOption ?? 'image_size';
    throw new CatalogInputError(
      `${spec.label} is built for ${size}x${size} images (${option}=${size}) and cannot take a ${sample.join('x')} input; build it with ${option}=${sample[1]} for ${sample[1]}x${sample[1]} images`,
    );
  }
}

/** The smallest n for which an n x n image goes through (bisection), or null if none up to 1024 does. */
export function smallestSquare(model: TracedModel, channels: number): number | null {
  const fits = (n: number) => {
    try {
      tracedTable(model, [channels, n, n]);
      return true;
    } catch (error) {
      if (error instanceof CatalogInputError) return false;
      throw error;
    }
  };
  let low = 0;
  let high = 1024;
  if (!fits(high)) return null;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (fits(middle)) high = middle;
    else low = middle;
  }
  return high;
}

/** `10`, `'text'`, `True`, `None`: an option value as Python prints it, for messages. */
export function pythonValue(value: OptionValue | undefined): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return `'${value}'`;
  return String(value);
}
