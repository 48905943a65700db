/**
 * A timm model's layer table at one input size, from its rows' size laws (timmData.ts): the base
 * rows, or a variant's (features_only, another global_pool, num_classes=0, drop_path_rate > 0)
 * made of base rows and rows of its own.
 */
import type { LayerRow } from '../../layerTable/layerTable';
import { evaluateLaw, isOwnRow, type LawValues, type ParamsLaw, type SizeLaw, type TimmRecord, type TimmRow, type TimmVariant } from './timmData';

export interface EvaluatedTable {
  readonly rows: LayerRow[];
  readonly output: number[] | undefined;
  readonly outputs?: number[][];
  /** Numbers whose rounding the recorded sizes left open at this size. */
  readonly open: number;
  /** Numbers no law explains, kept at their default-size value. */
  readonly underived: number;
  /** The first row with an empty output (the input is too small), if any. */
  readonly empty?: string;
}

/** The rows a variant (or the base, without one) is made of. */
export function variantRows(record: TimmRecord, variant: TimmVariant | undefined): TimmRow[] {
  if (!variant?.rows) return [...record.rows];
  const out: TimmRow[] = [];
  for (const item of variant.rows) {
    if (isOwnRow(item)) {
      out.push(item);
    } else if (item.length === 3) {
      const base = record.rows[item[0]]!;
      out.push([item[2], ...base.slice(1)] as unknown as TimmRow);
    } else {
      for (let i = item[0]; i < item[0] + item[1]; i++) out.push(record.rows[i]!);
    }
  }
  return out;
}

function isSizeLaw(law: ParamsLaw): law is SizeLaw {
  return !(Array.isArray(law) && law.length === 3);
}

export function evaluateRows(
  rows: readonly TimmRow[],
  outputLaws: readonly SizeLaw[] | undefined,
  values: LawValues,
  defaults: LawValues,
  listLaws?: readonly (readonly SizeLaw[])[] | null,
): EvaluatedTable {
  let open = 0;
  let underived = 0;
  let empty: string | undefined;
  const atDefault = values.h === defaults.h && values.w === defaults.w;
  const number = (law: SizeLaw): number => {
    const result = evaluateLaw(law, values);
    if (result.open) open++;
    if (!result.derived && !atDefault) underived++;
    return result.value;
  };
  const params = (law: ParamsLaw): number => {
    if (isSizeLaw(law)) return number(law);
    const [size, perClass, perChannel] = law;
    return number(size) + perClass * (values.classes - defaults.classes) + perChannel * (values.channels - defaults.channels);
  };
  const out: LayerRow[] = rows.map(([path, type, paramsLaw, shapeLaws, trainable, extraLaw]) => {
    const outputShape = shapeLaws ? shapeLaws.map(number) : null;
    if (outputShape && empty === undefined && outputShape.some((d) => d <= 0)) empty = `${path} (${type})`;
    const extra = extraLaw === undefined ? 0 : number(extraLaw);
    const activations = (outputShape ? outputShape.reduce((n, d) => n * d, 1) : 0) + extra;
    return { path, type, outputShape, activations, params: params(paramsLaw), trainable };
  });
  const outputs = listLaws ? listLaws.map((laws) => laws.map(number)) : undefined;
  const output = outputs ? outputs[0] : outputLaws ? outputLaws.map(number) : undefined;
  return { rows: out, output, open, underived, ...(outputs ? { outputs } : {}), ...(empty !== undefined ? { empty } : {}) };
}
