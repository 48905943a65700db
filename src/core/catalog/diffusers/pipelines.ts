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
  /** The pipeline's own class (model_index.json's `_class_name`): `StableDiffusionPipeline`. */
  readonly pipelineClass: string;
  /** By subfolder: `unet`, `vae`, `text_encoder`, `tokenizer`, `scheduler`. */
  readonly components: Readonly<Record<string, PipelineComponent>>;
}

export const PIPELINES: readonly Pipeline[] = data.pipelines as unknown as readonly Pipeline[];

/** The pipeline a script names, by its name or an older one (`runwayml/stable-diffusion-v1-5`), ignoring case. */
export function findPipeline(name: string): Pipeline | undefined {
  const wanted = name.replace(/\/+$/, '').toLowerCase();
  return PIPELINES.find((p) => [p.name, ...p.aliases].some((n) => n.toLowerCase() === wanted));
}

/**
 * Each component's config keyed `repo/subfolder` as the script spells the repository, and under
 * `repo/model_index.json` what the repository's model_index.json says (the pipeline's class, each
 * component's library and class), for the dry run's hub configs.
 */
export function pipelineConfigs(name: string): Record<string, Readonly<Record<string, unknown>>> {
  const pipeline = findPipeline(name);
  if (!pipeline) return {};
  const repo = name.replace(/\/+$/, '');
  const components = Object.entries(pipeline.components);
  const library = (component: PipelineComponent) => ('model_type' in component.config || /Tokenizer$/.test(component.className) ? 'transformers' : 'diffusers');
  return {
    ...Object.fromEntries(components.map(([subfolder, component]) => [`${repo}/${subfolder}`, component.config])),
    [`${repo}/model_index.json`]: { _class_name: pipeline.pipelineClass, ...Object.fromEntries(components.map(([subfolder, component]) => [subfolder, [library(component), component.className]])) },
  };
}
