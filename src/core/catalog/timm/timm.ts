/**
 * The timm part of the catalog: `timm.create_model("resnet50", num_classes=10)`, as timm 1.0.31
 * builds it. Every model timm lists that builds on the CPU was measured by
 * scripts/catalog/generate_timm.py with timm itself (module paths, parameters and layer table as
 * harness/layer_table.py records them); each row's numbers are size laws, so the table follows
 * the input size (docs/catalog.md, "timm").
 */
import { CatalogInputError, type CatalogArchitecture, type CatalogMiss, type CatalogOptions } from '../catalog';
import { unknownNameMessage } from '../closestNames';
import { pythonValue } from '../traced/tracedArchitecture';
import { TIMM_VERSIONS } from '../data/timmIndex';
import { timmAliases, timmEntry, timmFailure, timmKnownNames, timmRecord, type LawValues, type TimmEntry, type TimmRecord, type TimmVariant } from './timmData';
import { measuredSavedActivations } from '../savedActivations';
import { evaluateRows, variantRows } from './timmTable';

/** create_model options that never change the layer table. */
const NO_EFFECT = ['pretrained', 'pretrained_cfg', 'pretrained_cfg_overlay', 'checkpoint_path', 'cache_dir', 'scriptable', 'exportable', 'no_jit', 'drop_block_rate', 'proj_drop_rate', 'attn_drop_rate', 'pos_drop_rate', 'patch_drop_rate'];
const KNOWN = ['num_classes', 'in_chans', 'global_pool', 'img_size', 'features_only', 'drop_rate', 'drop_path_rate', 'out_indices', ...NO_EFFECT];

/** The timm model names the catalog knows (timm's deprecated names included), sorted. */
export function timmModelNames(): string[] {
  return [...timmKnownNames(), ...Object.keys(timmAliases())].sort();
}

/** A create_model name split into the catalog's model and its pretrained tag: `resnet50.a1_in1k`, `timm/resnet50`, `hf_hub:timm/resnet50.tv_in1k`. */
export function timmName(name: string): { model: string; tag?: string } | undefined {
  const bare = name.replace(/^hf[-_]hub:/, '').replace(/^timm\//, '');
  const [model, tag] = splitTag(bare);
  const alias = timmAliases()[model];
  if (alias !== undefined) {
    const [target, aliasTag] = splitTag(alias);
    return timmEntry(target) ? { model: target, ...((tag ?? aliasTag) !== undefined ? { tag: (tag ?? aliasTag)! } : {}) } : undefined;
  }
  return timmEntry(model) ? { model, ...(tag !== undefined ? { tag } : {}) } : undefined;
}

function splitTag(name: string): [string, string | undefined] {
  const dot = name.indexOf('.');
  return dot < 0 ? [name, undefined] : [name.slice(0, dot), name.slice(dot + 1)];
}

interface Resolved {
  readonly classes: number;
  readonly channels: number;
  /** The img_size a strict model is built for, [h, w]; for the others, the (tag's) default input. */
  readonly size: readonly [number, number];
  readonly variantKey?: string;
  readonly notes: string[];
}

export function timmArchitecture(name: string, options: CatalogOptions): CatalogArchitecture | CatalogMiss {
  const resolved = timmName(name);
  if (resolved === undefined) {
    const bare = splitTag(name.replace(/^hf[-_]hub:/, '').replace(/^timm\//, ''))[0];
    const failure = timmFailure(bare);
    if (failure !== undefined) return { miss: `timm.create_model("${bare}"): measuring it with timm ${TIMM_VERSIONS.timm} failed when the catalog was generated (${failure})` };
    return { miss: unknownNameMessage('timm', name, timmModelNames()) };
  }
  const entry = timmEntry(resolved.model)!;
  const record = timmRecord(entry);
  const where = `timm.create_model("${resolved.model}${resolved.tag !== undefined ? `.${resolved.tag}` : ''}")`;
  const settings = resolve(entry, record, resolved.tag, options, where);
  if ('miss' in settings) return settings;
  return architecture(entry, record, settings, where);
}

function resolve(entry: TimmEntry, record: TimmRecord, tag: string | undefined, options: CatalogOptions, where: string): Resolved | CatalogMiss {
  const tagConfig = tag !== undefined ? record.tags[tag] : undefined;
  if (tag !== undefined && tagConfig === undefined) return { miss: `${where}: timm ${TIMM_VERSIONS.timm} has no pretrained tag "${tag}" for ${entry.name} (it has ${Object.keys(record.tags).join(', ') || 'none'})` };
  const notes: string[] = [];
  const defaultClasses = tagConfig?.num_classes ?? record.options.num_classes.default;
  let classes = defaultClasses;
  let channels = record.options.in_chans.default;
  const tagInput = tagConfig?.img_size ?? tagConfig?.input?.slice(1);
  let size: [number, number] = tagInput ? [tagInput[0]!, tagInput[1]!] : [entry.input[1], entry.input[2]];
  const variants: string[] = [];
  for (const [option, value] of Object.entries(options)) {
    if (!KNOWN.includes(option)) return { miss: `${where}: the catalog does not know the option \`${option}\` (it takes ${KNOWN.slice(0, 8).join(', ')} and timm's drop rates)` };
    if (option === 'num_classes') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) return { miss: `${where}: num_classes should be an int >= 0, not ${pythonValue(value)}` };
      if (value === 0) variants.push('num_classes=0');
      else classes = value;
    } else if (option === 'in_chans') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) return { miss: `${where}: in_chans should be a positive int, not ${pythonValue(value)}` };
      channels = value;
    } else if (option === 'global_pool') {
      if (typeof value !== 'string') return { miss: `${where}: global_pool should be a string, not ${pythonValue(value)}` };
      const key = `global_pool=${JSON.stringify(value)}`;
      const variant = record.variants[key];
      if (variant === undefined) return { miss: `${where}: the catalog covers global_pool ${Object.keys(record.variants).filter((k) => k.startsWith('global_pool=') && !record.variants[k]!.refused).map((k) => k.slice(12)).join(', ')}, not ${pythonValue(value)}` };
      if (variant.refused) return { miss: `${where}: timm refuses global_pool=${pythonValue(value)} for this model (${variant.refused})` };
      if (!variant.same) variants.push(key);
    } else if (option === 'features_only') {
      if (value === true) variants.push('features_only=true');
    } else if (option === 'drop_path_rate') {
      if (typeof value === 'number' && value > 0) {
        variants.push('drop_path_rate=0.1');
        if (record.sameAs['drop_path_rate=0.3'] === false) notes.push(`drop_path_rate=${value}: the rows are drop_path_rate=0.1's; this model's structure also depends on the rate's value.`);
      }
    } else if (option === 'drop_rate') {
      if (typeof value === 'number' && value > 0 && record.sameAs['drop_rate=0.2'] === false) notes.push(`drop_rate=${value} changes this model's layers; the rows are drop_rate=0's.`);
    } else if (option === 'out_indices') {
      notes.push(`out_indices=${pythonValue(value)}: the catalog has features_only's default out_indices; the rows are those of every feature level.`);
    } else if (option === 'img_size') {
      const parsed = typeof value === 'number' && Number.isInteger(value) && value > 0 ? ([value, value] as [number, number]) : undefined;
      if (!parsed) return { miss: `${where}: img_size should be a positive int, not ${pythonValue(value)}` };
      if (record.strict) size = parsed;
      else if (record.imgSize === 'refused') return { miss: `${where}: ${entry.className} takes no img_size in timm ${TIMM_VERSIONS.timm} (it takes any image size as it is)` };
      else if (record.imgSize === 'changes') return { miss: `${where}: img_size changes this model's layers in a way the catalog does not cover` };
      else if (record.imgSize === 'fails') {
        return { miss: `${where}: timm ${TIMM_VERSIONS.timm} builds ${entry.className} with img_size, but the model it built failed when the catalog was measured (${record.imgSizeError ?? 'no message'}), so the catalog does not cover img_size for it` };
      }
    }
  }
  const missing = (symbol: 'num_classes' | 'in_chans', value: number) => {
    const option = record.options[symbol];
    return value !== option.default && option.reason !== undefined ? { miss: `${where}: ${symbol}=${value} is not covered: ${option.reason}` } : undefined;
  };
  const classMiss = missing('num_classes', classes) ?? missing('in_chans', channels);
  if (classMiss) return classMiss;
  const order = ['features_only=true', 'num_classes=0', ...variants.filter((k) => k.startsWith('global_pool=')), 'drop_path_rate=0.1'];
  const chosen = order.find((k) => variants.includes(k));
  for (const other of variants) if (other !== chosen) notes.push(`${other.replace('=true', '=True')}: its changes are not applied together with ${chosen!.replace('=true', '=True')} (the catalog has one option's variant at a time)`);
  if (chosen !== undefined) {
    const variant = record.variants[chosen]!;
    if (variant.refused) return { miss: `${where}: timm refuses ${chosen.replace('=true', '=True')} for this model (${variant.refused})` };
    if (variant.classes === false && classes !== defaultClasses) return { miss: `${where}: num_classes=${classes} with ${chosen} is not covered (its head does not follow num_classes linearly)` };
  }
  return { classes, channels, size, notes, ...(chosen !== undefined && !record.variants[chosen]!.same ? { variantKey: chosen } : {}) };
}

function architecture(entry: TimmEntry, record: TimmRecord, settings: Resolved, where: string): CatalogArchitecture {
  const variant: TimmVariant | undefined = settings.variantKey !== undefined ? record.variants[settings.variantKey] : undefined;
  const rows = variantRows(record, variant);
  const outputLaws = variant ? variant.output : record.output;
  const defaults: LawValues = { h: entry.input[1], w: entry.input[2], classes: record.options.num_classes.default, channels: record.options.in_chans.default };
  const valuesAt = (h: number, w: number): LawValues => ({ h, w, classes: settings.classes, channels: settings.channels });
  const [h0, w0] = settings.size;
  const params = evaluateRows(rows, outputLaws, valuesAt(h0, w0), defaults).rows.reduce((n, r) => n + (r.params ?? 0), 0);
  return {
    library: 'timm',
    name: entry.name,
    className: settings.variantKey === 'features_only=true' ? 'FeatureListNet' : entry.className,
    params,
    input: { kind: 'image', defaultShape: [settings.channels, h0, w0] },
    source: `timm ${TIMM_VERSIONS.timm} (torch ${TIMM_VERSIONS.torch}), measured at ${record.sizes} input sizes`,
    table(sample) {
      if (sample.length !== 3) throw new CatalogInputError(`${where} takes images (channels, height, width), not a ${sample.length}-d sample`);
      const [c, h, w] = sample as [number, number, number];
      if (c !== settings.channels) throw new CatalogInputError(`${where}: the model takes ${settings.channels}-channel images (in_chans), not ${c}`);
      const notes = [...settings.notes];
      if (record.strict && (h !== h0 || w !== w0)) {
        throw new CatalogInputError(`${where} is built for ${h0}x${w0} images; pass img_size=${h === w ? h : `(${h}, ${w})`} to create_model for ${h}x${w} images`);
      }
      if (record.fixed && (h !== entry.input[1] || w !== entry.input[2])) {
        throw new CatalogInputError(`${where} takes ${entry.input[1]}x${entry.input[2]} images only (timm refused other sizes: ${record.fixed})`);
      }
      const result = evaluateRows(rows, outputLaws, valuesAt(h, w), defaults, variant?.outputs);
      if (result.empty !== undefined) throw new CatalogInputError(`${where}: a ${h}x${w} image is too small (${result.empty} gives an empty output)`);
      const [hd, wd] = [entry.input[1], entry.input[2]];
      if ((h !== hd || w !== wd) && record.refused && record.refused.length > 0) {
        notes.push(`timm refused some sizes while this model was measured (${record.refused.slice(0, 3).map(([a, b]) => `${a}x${b}`).join(', ')}); it may refuse ${h}x${w} too.`);
      }
      // The laws rest on sizes 128 below and 160 above the default; where timm refused both on one
      // side, they only saw sizes that round alike and cannot tell how the numbers move.
      const refusedAt = (dh: number, dw: number) => (record.refused ?? []).some(([a, b]) => a === hd + dh && b === wd + dw);
      const narrow = (h !== hd && refusedAt(-128, 0) && refusedAt(160, 0)) || (w !== wd && refusedAt(0, -128) && refusedAt(0, 160));
      if (narrow) notes.push(`timm refused the sizes far from ${hd}x${wd} while this model was measured, so its numbers at ${h}x${w} are not derived: they are the laws' guesses.`);
      if (result.open > 0) notes.push(`${result.open} numbers of this table round either way at ${h}x${w} as far as the measured sizes tell; the lower value is used.`);
      if (result.underived > 0) notes.push(`${result.underived} numbers of this table (parameters or shapes) follow no law over the measured sizes; they keep their ${hd}x${wd} value.`);
      // features_only returns every feature map and has no head: not what was measured.
      const saved = settings.variantKey === 'features_only=true' ? undefined : measuredSavedActivations('timm', entry.name, h, w);
      return {
        inputShape: [c, h, w],
        rows: result.rows,
        notes,
        ...(result.output ? { output: result.output } : {}),
        ...(result.outputs ? { outputs: result.outputs } : {}),
        ...(saved === undefined ? {} : { savedActivations: saved }),
      };
    },
  };
}
