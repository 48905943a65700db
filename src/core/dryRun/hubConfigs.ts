/**
 * The catalog's configs of the Hugging Face checkpoints a script names, for the dry run: with no
 * network it builds `from_pretrained("bert-base-uncased")` from the config (weights change values,
 * not memory) instead of stopping at the download. A Stable Diffusion repository's components go
 * under `repo/subfolder` (`runwayml/stable-diffusion-v1-5/unet`), as scripts load each from its subfolder.
 */
import { findCheckpoint } from '../catalog/hf/checkpoints';
import { pipelineConfigs } from '../catalog/diffusers/pipelines';

/** A config.json's structural values with its `model_type`, keyed by the name the script uses. */
export type HubConfigs = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/** A quoted hub id: `name` or `organisation/name`. */
const QUOTED_ID = /["']([A-Za-z0-9][\w.-]*(?:\/[\w.-]+)?)["']/g;

/** A hub id as a value on its own (`--model runwayml/stable-diffusion-v1-5`, an assumed value). */
const BARE_ID = /^[A-Za-z0-9][\w.-]*(?:\/[\w.-]+)?$/;

/** `source`: the script (its quoted ids); `values`: its command-line arguments and the values assumed for it. */
export function hubConfigsNamedIn(source: string, values: readonly unknown[] = []): HubConfigs {
  const configs: Record<string, Readonly<Record<string, unknown>>> = {};
  const ids = [...[...source.matchAll(QUOTED_ID)].map((m) => m[1]!), ...values.filter((v): v is string => typeof v === 'string' && BARE_ID.test(v))];
  for (const id of ids) {
    if (id in configs) continue;
    const checkpoint = findCheckpoint(id);
    if (checkpoint) configs[id] = { model_type: checkpoint.modelType, ...checkpoint.config };
    Object.assign(configs, pipelineConfigs(id));
  }
  return configs;
}
