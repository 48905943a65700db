/**
 * The Stable Diffusion pipelines the catalog knows (pipelines.json): each component's config by
 * the subfolder a script loads it from (`UNet2DConditionModel.from_pretrained(repo, subfolder="unet")`).
 */
import data from './pipelines.json';

export interface PipelineComponent {
  /** The class the pipeline loads for it: `UNet2DConditionModel`, `CLIPTextModel`, `PNDMScheduler`. */
  readonly className: string;
  /** The library's parameter count for this config (models only). */
  readonly params?: number;
  /** The structural values of the subfolder's config.json. */
  readonly config: Readonly<Record<string, unknown>>;
}

export interface Pipeline {
  readonly name: string;
  readonly aliases: readonly string[];
  readonly source: string;
  /** By subfolder: `unet`, `vae`, `text_encoder`, `tokenizer`, `scheduler`. */
  readonly components: Readonly<Record<string, PipelineComponent>>;
}

export const PIPELINES: readonly Pipeline[] = data.pipelines as unknown as readonly Pipeline[];

/** The pipeline a script names, by its name or an older one (`runwayml/stable-diffusion-v1-5`), ignoring case. */
export function findPipeline(name: string): Pipeline | undefined {
  const wanted = name.replace(/\/+$/, '').toLowerCase();
  return PIPELINES.find((p) => [p.name, ...p.aliases].some((n) => n.toLowerCase() === wanted));
}

/** Each component's config keyed `repo/subfolder` as the script spells the repository, for the dry run's hub configs. */
export function pipelineConfigs(name: string): Record<string, Readonly<Record<string, unknown>>> {
  const pipeline = findPipeline(name);
  if (!pipeline) return {};
  const repo = name.replace(/\/+$/, '');
  return Object.fromEntries(Object.entries(pipeline.components).map(([subfolder, component]) => [`${repo}/${subfolder}`, component.config]));
}
