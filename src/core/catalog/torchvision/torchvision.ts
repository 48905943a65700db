/**
 * The torchvision part of the catalog: `torchvision.models.resnet50(num_classes=10)` and the
 * other classification builders of torchvision 0.14, answered from data generated from the
 * library itself (scripts/catalog/generate_catalog.py; docs/catalog.md). Options are honoured
 * as torchvision honours them: num_classes, aux_logits, vit's image_size, mobilenet_v2's
 * width_mult, weights/pretrained (which fix num_classes to 1000, as torchvision does); options
 * that cannot change the layer table (dropout, progress...) are accepted; anything else is a
 * CatalogMiss that says why.
 */
import type { CatalogArchitecture, CatalogMiss, CatalogOptions } from '../catalog';
import { TORCHVISION_BLOBS, TORCHVISION_INDEX, TORCHVISION_VERSIONS } from '../data/torchvision';
import { unknownNameMessage } from '../closestNames';
import { detectionArchitecture } from './detection';
import { measuredSavedActivations } from '../savedActivations';
import { pythonValue, tracedArchitecture } from '../traced/tracedArchitecture';
import { BlobCache, type OptionValue, type TracedIndexEntry, type WeightsInfo } from '../traced/tracedData';

const blobs = new BlobCache(TORCHVISION_BLOBS);
/** How a request names a builder of torchvision.models.detection (detection.ts). */
const DETECTION_PREFIX = 'detection.';

export const TORCHVISION_VERSION = TORCHVISION_VERSIONS.torchvision ?? 'unknown';

/** Options every builder takes besides its model class's: the weights and the download progress bar. */
const BUILDER_OPTIONS = ['weights', 'progress', 'pretrained'];

/** The model names the torchvision catalog knows, sorted. */
export function torchvisionModelNames(): string[] {
  return Object.keys(TORCHVISION_INDEX).sort();
}

/** The catalog's name for `name`: as is, or without a `torchvision.models.` prefix; undefined if unknown. */
export function torchvisionName(name: string): string | undefined {
  const bare = name.replace(/^(torchvision\.)?models\./, '');
  return bare in TORCHVISION_INDEX ? bare : undefined;
}

/** The torchvision model `name` built with `options`, or why the catalog cannot answer. */
export function torchvisionArchitecture(name: string, options: CatalogOptions): CatalogArchitecture | CatalogMiss {
  if (name.startsWith(DETECTION_PREFIX)) return detectionArchitecture(name.slice(DETECTION_PREFIX.length), options);
  const canonical = torchvisionName(name);
  if (canonical === undefined) return { miss: unknownNameMessage('torchvision', name, torchvisionModelNames()) };
  const entry = TORCHVISION_INDEX[canonical]!;
  const resolved = resolveOptions(canonical, entry, options);
  if ('miss' in resolved) return resolved;
  const blob = blobs.get(canonical);
  const imageSize = resolved.values.image_size;
  return tracedArchitecture({
    library: 'torchvision',
    name: canonical,
    className: entry.className,
    source: `torchvision ${TORCHVISION_VERSION} (generated)`,
    blob,
    when: resolved.when,
    values: resolved.values,
    defaultShape: imageSize !== undefined ? [entry.input[0]!, imageSize, imageSize] : entry.input,
    label: resolved.label,
    notes: resolved.notes,
    ...(imageSize !== undefined ? { fixedSize: imageSize, fixedSizeOption: 'image_size' } : {}),
    // Measured with the default options; mobilenet_v2's other widths are other networks.
    ...(resolved.when.width_mult === undefined || resolved.when.width_mult === 1.0 ? { savedActivations: (sample: readonly number[]) => measuredSavedActivations('torchvision', canonical, sample[1]!, sample[2]!) } : {}),
  });
}

export interface ResolvedOptions {
  readonly when: Record<string, OptionValue>;
  readonly values: Record<string, number>;
  readonly label: string;
  readonly notes: string[];
}

/**
 * Turns a builder call's options into the variant and the symbolic values the data needs,
 * following torchvision 0.14's builders: `weights` (a member name, `Enum.MEMBER`, `DEFAULT` or
 * None) or the legacy `pretrained`; then each option by what the generator found it does.
 */
export function resolveOptions(name: string, entry: TracedIndexEntry, options: CatalogOptions): ResolvedOptions | CatalogMiss {
  const where = `torchvision.models.${name}`;
  const when: Record<string, OptionValue> = {};
  const values: Record<string, number> = {};
  const notes: string[] = [];
  const table = entry.options ?? {};
  for (const [option, info] of Object.entries(table)) {
    if (info.kind === 'variant') when[option] = info.default;
    if ((info.kind === 'classes' || info.kind === 'template') && typeof info.default === 'number') values[option] = info.default;
  }

  const weights = chooseWeights(where, entry.weights ?? null, options);
  if (typeof weights === 'object' && weights !== null) return weights;

  const labelled: string[] = [];
  for (const [option, value] of Object.entries(options)) {
    if (BUILDER_OPTIONS.includes(option)) continue;
    const info = table[option];
    if (!info) {
      const accepted = [...BUILDER_OPTIONS.filter((o) => o !== 'pretrained'), ...Object.keys(table).filter((o) => table[o]!.kind !== 'fixed' || 'covers' in table[o]!)];
      return { miss: `${where} has no option \`${option}\` (it takes ${accepted.join(', ')})` };
    }
    switch (info.kind) {
      case 'classes':
      case 'template':
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) return { miss: `${where}: \`${option}\` should be a positive int, not ${pythonValue(value)}` };
        if (info.multipleOf && value % info.multipleOf !== 0) {
          return { miss: `${where}: ${option}=${value} is not a multiple of ${info.multipleOf}, which torchvision refuses (the image must split into whole patches)` };
        }
        values[option] = value;
        labelled.push(`${option}=${value}`);
        break;
      case 'variant': {
        const match = info.values?.find((v) => v === value);
        if (match === undefined) {
          return { miss: `${where}: the catalog has ${name} for ${option} = ${(info.values ?? []).map(pythonValue).join(', ')}, not ${pythonValue(value)}` };
        }
        when[option] = match;
        if (match !== info.default) labelled.push(`${option}=${pythonValue(match)}`);
        break;
      }
      case 'none':
        if (info.note) notes.push(info.note);
        break;
      case 'fixed':
        if (!('covers' in info) || value !== info.covers) {
          const covered = 'covers' in info ? `; it covers only ${option}=${pythonValue(info.covers)}` : '';
          return { miss: `${where}: the catalog cannot build it with ${option}=${pythonValue(value)}: ${info.reason ?? 'it changes the architecture'}${covered}` };
        }
        break;
    }
  }

  if (weights !== null && entry.weights) {
    const member = entry.weights.members[weights]!;
    for (const [param, fixed] of Object.entries(member.fixes)) {
      if (param in options && options[param] !== fixed) {
        // torchvision's own words (_ovewrite_named_param).
        return { miss: `${where}(weights=${entry.weights.enum}.${weights}): The parameter '${param}' expected value ${pythonValue(fixed)} but got ${pythonValue(options[param])} instead.` };
      }
      if (typeof fixed === 'number' && param in values) values[param] = fixed;
    }
    for (const [option, value] of Object.entries(member.variant)) {
      if (!(option in options)) {
        when[option] = value;
        if (value !== table[option]?.default) labelled.push(`${option}=${pythonValue(value)}`);
      }
    }
    if (!('image_size' in options) && 'image_size' in member.fixes && typeof member.fixes.image_size === 'number') labelled.push(`image_size=${member.fixes.image_size}`);
  }
  const label = labelled.length > 0 ? `${name} (${labelled.join(', ')})` : name;
  return { when, values, label, notes };
}

/** The weights member the options ask for, null for none, or a miss. */
function chooseWeights(where: string, info: WeightsInfo | null, options: CatalogOptions): string | null | CatalogMiss {
  const hasWeights = 'weights' in options && options.weights !== null && options.weights !== 'None';
  const pretrained = options.pretrained;
  if ('weights' in options && 'pretrained' in options) {
    return { miss: `${where}: pass either weights or the deprecated pretrained, not both` };
  }
  if (pretrained !== undefined && pretrained !== null && typeof pretrained !== 'boolean') {
    return { miss: `${where}: pretrained should be True or False, not ${pythonValue(pretrained)}` };
  }
  if (pretrained === true) {
    if (!info?.legacy) return { miss: `${where}: No weights available for model ${where.split('.').pop()}` };
    return info.legacy;
  }
  if (!hasWeights) return null;
  const value = options.weights;
  if (typeof value !== 'string' || !info) {
    return { miss: `${where}: weights should be a ${info?.enum ?? 'weights enum'} member or None, not ${pythonValue(value ?? null)}` };
  }
  // `IMAGENET1K_V2`, `ResNet50_Weights.IMAGENET1K_V2`, `models.ResNet50_Weights.DEFAULT`, `"DEFAULT"`.
  const parts = value.split('.');
  const member = parts[parts.length - 1]!;
  const enumName = parts.length > 1 ? parts[parts.length - 2]! : info.enum;
  if (enumName !== info.enum) return { miss: `${where} takes ${info.enum}, not ${enumName}` };
  if (member === 'DEFAULT') return info.default;
  if (!(member in info.members)) {
    return { miss: `${where}: ${info.enum} has no ${member} (it has ${Object.keys(info.members).join(', ')} and DEFAULT = ${info.default})` };
  }
  return member;
}
