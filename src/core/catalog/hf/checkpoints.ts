/** The hub checkpoints the catalog knows (checkpoints.json) and how a script's name finds one. */
import type { HfConfig, ModelType } from './configs';
import data from './checkpoints.json';
import { editDistance } from '../closestNames';

export interface Checkpoint {
  /** The name the catalog reports: the hub's short name where there is one (`bert-base-uncased`). */
  readonly name: string;
  /** Other names for the same files (`google-bert/bert-base-uncased`, a chat variant of the same shape). */
  readonly aliases: readonly string[];
  readonly modelType: ModelType;
  /** The structural values of the checkpoint's config.json. */
  readonly config: HfConfig;
  /** Where the values come from. */
  readonly source: string;
  /**
   * A published exact parameter count for one class built from this config, and where it is
   * published; scripts/catalog/generate_hf_catalog.py stops unless the library counts the same.
   */
  readonly published?: {
    readonly className: string;
    readonly params: number;
    /** Parameters the published model holds beyond the class (KerasHub's ELECTRA backbones add a pooling Dense). */
    readonly plus?: number;
    readonly source: string;
  };
  /** Set on a checkpoint the catalog does not know, whose shape is assumed from its name (assumedCheckpoint.ts): the note that says so. */
  readonly assumed?: string;
}

export const CHECKPOINTS: readonly Checkpoint[] = (data.checkpoints as ReadonlyArray<Record<string, unknown>>).map((entry) => ({
  name: entry.name as string,
  aliases: entry.aliases as string[],
  modelType: entry.modelType as ModelType,
  config: entry.config as HfConfig,
  source: entry.source as string,
  ...(entry.published ? { published: entry.published as Checkpoint['published'] } : {}),
}));

/**
 * The checkpoint a script names: exactly, else ignoring case, else a mirror's: the same files
 * re-published under another organisation (`NousResearch/Llama-2-7b-hf`, `unsloth/Llama-3.2-1B`)
 * keep their short name, which names a checkpoint when exactly one has it.
 */
export function findCheckpoint(name: string): Checkpoint | undefined {
  const exact = CHECKPOINTS.find((c) => c.name === name || c.aliases.includes(name));
  if (exact) return exact;
  const lower = name.toLowerCase();
  const named = CHECKPOINTS.find((c) => c.name.toLowerCase() === lower || c.aliases.some((a) => a.toLowerCase() === lower));
  if (named || !lower.includes('/')) return named;
  const short = lower.slice(lower.lastIndexOf('/') + 1);
  // A pre-quantized mirror (`unsloth/llama-3-8b-bnb-4bit`) has its base's shape; Meta's names start with `Meta-`.
  const base = withoutQuantizationSuffix(short);
  for (const wanted of [short, base, `meta-${base}`]) {
    const mirrored = CHECKPOINTS.filter((c) => [c.name, ...c.aliases].some((n) => n.toLowerCase().slice(n.lastIndexOf('/') + 1) === wanted));
    if (mirrored.length === 1) return mirrored[0];
  }
  return undefined;
}

/** A pre-quantized mirror's name without its suffix (`llama-3-8b-bnb-4bit` -> `llama-3-8b`). */
export function withoutQuantizationSuffix(name: string): string {
  return name.replace(/(-unsloth)?(-bnb)?-4bit$/i, '');
}

/** Whether a hub id names a mirror stored in 4 bits by bitsandbytes (`...-bnb-4bit`), which from_pretrained loads as such. */
export function isBnb4bitMirror(name: string): boolean {
  return /-bnb-4bit$/i.test(name);
}

/**
 * Up to `limit` names closest to `name`: names that contain it or that it contains first, then by
 * edit distance (case and punctuation ignored), within a distance that grows with the name's length.
 */
export function closest(name: string, known: readonly string[], limit = 3): string[] {
  const squash = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  const wanted = squash(name);
  const scored = known.map((candidate) => {
    const s = squash(candidate);
    const short = squash(candidate.split('/').pop()!);
    let score: number;
    if (wanted.length >= 3 && (s.includes(wanted) || wanted.includes(short))) score = Math.abs(short.length - wanted.length) / 100;
    else score = 1 + Math.min(editDistance(wanted, s), editDistance(wanted, short));
    return { candidate, score };
  });
  const threshold = 1 + Math.max(2, Math.floor(wanted.length / 3));
  const seen = new Set<string>();
  return scored
    .filter((s) => s.score <= threshold)
    .sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate))
    .map((s) => s.candidate)
    .filter((c) => (seen.has(c) ? false : (seen.add(c), true)))
    .slice(0, limit);
}
