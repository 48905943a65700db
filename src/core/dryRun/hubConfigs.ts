/**
 * The catalog's configs of the Hugging Face checkpoints a script names, for the dry run: with no
 * network it builds `from_pretrained("bert-base-uncased")` from the config (weights change values,
 * not memory) instead of stopping at the download.
 */
import { findCheckpoint } from '../catalog/hf/checkpoints';

/** A config.json's structural values with its `model_type`, keyed by the name the script uses. */
export type HubConfigs = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/** A quoted hub id: `name` or `organisation/name`. */
const QUOTED_ID = /["']([A-Za-z0-9][\w.-]*(?:\/[\w.-]+)?)["']/g;

export function hubConfigsNamedIn(source: string): HubConfigs {
  const configs: Record<string, Readonly<Record<string, unknown>>> = {};
  for (const match of source.matchAll(QUOTED_ID)) {
    const id = match[1]!;
    if (id in configs) continue;
    const checkpoint = findCheckpoint(id);
    if (checkpoint) configs[id] = { model_type: checkpoint.modelType, ...checkpoint.config };
  }
  return configs;
}
