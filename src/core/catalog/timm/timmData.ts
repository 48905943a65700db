/**
 * The timm catalog's data (scripts/catalog/generate_timm.py, docs/catalog.md "timm"): an index of
 * names, decoded when a script first names a timm model, and one blob per timm module file
 * (`resnet`, `vision_transformer`...), decoded when a script names one of its models.
 *
 * Every number of a row is a size law (scripts/catalog/timm_laws.py): a constant, or
 * `[c, k, a, s, aSpan, b, t, bSpan]` = c + k * F * G with F = floor((H + a) / s), G = floor((W + b) / t)
 * (a factor with s or t = 0 is 1), plus m * F + n * G where two more numbers [..., m, n] follow
 * (relative-position tables), `'nc'` / `'ic'` (the number of classes / input channels),
 * `['ic', k]` (k times the input channels: TNT's pixel unfold), or `[value, null]` where no law
 * explained the samples (the value at the default size).
 */
import { brotliDecompressSync } from 'node:zlib';
import { TIMM_FAMILY_BLOBS } from '../data/timmFamilies';
import { TIMM_INDEX_BLOB } from '../data/timmIndex';

type Product = readonly [number, number, number, number, number, number, number, number];
type ChannelMultiple = readonly ['ic', number];
export type SizeLaw = number | 'nc' | 'ic' | ChannelMultiple | readonly [number, null] | Product | readonly [...Product, number, number];
/** A row's parameters: a size law, or [size law, per class, per input channel]. */
export type ParamsLaw = SizeLaw | readonly [SizeLaw, number, number];
/** [path, type, params, output shape or null (not called), trainable, activations beyond the output's product]. */
export type TimmRow = readonly [string, string, ParamsLaw, readonly SizeLaw[] | null, boolean, SizeLaw?];
/** A variant's row: a run of base rows [start, count], a base row under another path [index, 1, path], or its own row. */
export type VariantItem = readonly [number, number] | readonly [number, 1, string] | TimmRow;

export interface TimmVariant {
  /** timm's error for this option value. */
  readonly refused?: string;
  /** The option leaves the table as the default's. */
  readonly same?: boolean;
  readonly rows?: readonly VariantItem[];
  readonly output?: readonly SizeLaw[];
  /** features_only: every feature map the model returns (null where not measured). */
  readonly outputs?: readonly (readonly SizeLaw[])[] | null;
  /** False where this variant's head does not follow num_classes linearly. */
  readonly classes?: false;
}

export interface TimmOption {
  readonly default: number;
  /** Why values other than the default are not covered. */
  readonly reason?: string;
}

export interface TimmRecord {
  /** timm's module file (`resnet`, `vision_transformer`). */
  readonly family: string;
  readonly rows: readonly TimmRow[];
  readonly output?: readonly SizeLaw[];
  readonly options: { readonly num_classes: TimmOption; readonly in_chans: TimmOption };
  /** Keyed `option=<JSON value>`: `global_pool="max"`, `num_classes=0`, `features_only=true`, `drop_path_rate=0.1`. */
  readonly variants: Readonly<Record<string, TimmVariant>>;
  /** Whether another value gives the same table: `drop_rate=0.2` (as the default), `drop_path_rate=0.3` (as 0.1). */
  readonly sameAs: Readonly<Record<string, boolean>>;
  /** Pretrained tags whose config changes the model create_model builds. */
  readonly tags: Readonly<Record<string, { readonly num_classes?: number; readonly input?: readonly number[]; readonly img_size?: readonly number[] }>>;
  /** Built for one input size (img_size): other sizes need img_size, and the laws follow it. */
  readonly strict?: true;
  /** Why the model takes no size but its default (timm's error at another size). */
  readonly fixed?: string;
  /** For a model that is not strict, what img_size does: 'same' (nothing), 'changes', 'refused' (timm's constructor refuses it), 'fails' (the model timm builds with it failed). */
  readonly imgSize?: 'same' | 'changes' | 'refused' | 'fails';
  /** For imgSize 'fails' (timm builds the model with img_size, and that model failed when measured): timm's error. */
  readonly imgSizeError?: string;
  /** Sizes timm refused while the laws were measured. */
  readonly refused?: readonly (readonly [number, number])[];
  /** How many numbers no law explains. */
  readonly unfitted?: number;
  /** How many sizes the laws were measured at. */
  readonly sizes: number;
}

export interface TimmEntry {
  readonly name: string;
  /** The key of the blob holding its record (its timm module file, `vision_transformer#3` for a large one). */
  readonly blob: string;
  readonly className: string;
  /** Parameters with the default options. */
  readonly params: number;
  readonly input: readonly [number, number, number];
}

interface TimmIndex {
  readonly models: Readonly<Record<string, readonly [string, string, number, readonly [number, number, number]]>>;
  /** Names timm lists that the generator could not measure, with why. */
  readonly failed: Readonly<Record<string, string>>;
  /** timm's deprecated names and what they now build (`xception` -> `legacy_xception`). */
  readonly aliases: Readonly<Record<string, string>>;
}

function decode<T>(text: string): T {
  return JSON.parse(brotliDecompressSync(Buffer.from(text, 'base64')).toString('utf8')) as T;
}

let index: TimmIndex | undefined;
const blobs = new Map<string, Readonly<Record<string, TimmRecord>>>();

function timmIndex(): TimmIndex {
  index ??= decode<TimmIndex>(TIMM_INDEX_BLOB);
  return index;
}

export function timmEntry(name: string): TimmEntry | undefined {
  const found = timmIndex().models[name];
  if (!found) return undefined;
  const [blob, className, params, input] = found;
  return { name, blob, className, params, input: [input[0], input[1], input[2]] };
}

export function timmRecord(entry: TimmEntry): TimmRecord {
  let blob = blobs.get(entry.blob);
  if (!blob) {
    blob = decode<Record<string, TimmRecord>>(TIMM_FAMILY_BLOBS[entry.blob]!);
    blobs.set(entry.blob, blob);
  }
  return blob[entry.name]!;
}

export function timmKnownNames(): string[] {
  return Object.keys(timmIndex().models);
}

export function timmAliases(): Readonly<Record<string, string>> {
  return timmIndex().aliases;
}

export function timmFailure(name: string): string | undefined {
  return timmIndex().failed[name];
}

/** The values a law is evaluated with. */
export interface LawValues {
  readonly h: number;
  readonly w: number;
  readonly classes: number;
  readonly channels: number;
}

/** A law's value; `open` when the samples left this size's rounding open (the two ends of `a` or `b` disagree), `derived` false for `[value, null]`. */
export function evaluateLaw(law: SizeLaw, v: LawValues): { value: number; open: boolean; derived: boolean } {
  if (typeof law === 'number') return { value: law, open: false, derived: true };
  if (law === 'nc') return { value: v.classes, open: false, derived: true };
  if (law === 'ic') return { value: v.channels, open: false, derived: true };
  if (isChannelMultiple(law)) return { value: law[1] * v.channels, open: false, derived: true };
  if (law.length === 2) return { value: law[0], open: false, derived: false };
  const [c, k, a, s, aSpan, b, t, bSpan, m = 0, n = 0] = law;
  const at = (offset: number, stride: number, size: number) => (stride ? Math.floor((size + offset) / stride) : 1);
  const value = (f: number, g: number) => c + k * f * g + m * f + n * g;
  const low = value(at(a, s, v.h), at(b, t, v.w));
  const high = value(at(a + aSpan, s, v.h), at(b + bSpan, t, v.w));
  return { value: low, open: low !== high, derived: true };
}

function isChannelMultiple(law: SizeLaw): law is ChannelMultiple {
  return Array.isArray(law) && law[0] === 'ic';
}

export function isOwnRow(item: VariantItem): item is TimmRow {
  return typeof item[0] === 'string';
}
