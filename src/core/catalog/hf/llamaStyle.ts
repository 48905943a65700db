/**
 * The LLaMA-style decoders as transformers describes them (llamaStyle.json, written by
 * scripts/catalog/generate_hf_catalog.py from the library): one module tree, built by
 * models/llama.ts, with per-type class names, config defaults and fields, Auto mappings, biases
 * and activation field. The generator refuses a type whose module tree is not LLaMA's.
 */
import data from './llamaStyle.json';

/** The covered LLaMA-style model types; llamaStyle.json must describe exactly these. */
export const LLAMA_STYLE_TYPES = ['llama', 'mistral', 'qwen2', 'gemma', 'granite'] as const;
export type LlamaStyleType = (typeof LLAMA_STYLE_TYPES)[number];

/** A bias the library always or never gives a projection, or the config field that decides it. */
export type BiasRule = boolean | string;

export interface LlamaStyleEntry {
  readonly modelType: LlamaStyleType;
  readonly configClass: string;
  /** Class-name prefix: `Llama`, `Qwen2`. */
  readonly prefix: string;
  /** The concrete classes the library has: base model, causal LM, then the generic heads. */
  readonly classes: readonly string[];
  /** Auto class -> concrete class (transformers' auto mappings). */
  readonly auto: Readonly<Record<string, string>>;
  /** The config class's defaults (its dataclass fields), before `__post_init__`. */
  readonly defaults: Readonly<Record<string, number | string | boolean | null>>;
  readonly aliases: Readonly<Record<string, string>>;
  /** Every field of the config class. */
  readonly fields: readonly string[];
  /** Fields the generator changed and saw leave the layer table as it was. */
  readonly noEffectFields: readonly string[];
  /** `embed_tokens`: nn.Embedding, or the library's own subclass (Gemma's scaled embedding). */
  readonly embedding: { readonly type: string; readonly torch: boolean };
  /** The config field ACT2FN reads for the MLP. */
  readonly activationField: string;
  /** Activation names the config class replaces on construction (Gemma: legacy 'gelu' -> 'gelu_pytorch_tanh'). */
  readonly activationRewrites: Readonly<Record<string, string>>;
  /** Each head class -> the attribute holding its base model. */
  readonly headBase: Readonly<Record<string, string>>;
  readonly projectionBias: Readonly<Record<'q_proj' | 'k_proj' | 'v_proj' | 'o_proj', BiasRule>>;
  readonly mlpBias: Readonly<Record<'gate_proj' | 'up_proj' | 'down_proj', BiasRule>>;
}

export const TRANSFORMERS_LLAMA_STYLE_VERSION: string = data.transformers;

export const LLAMA_STYLE: Readonly<Record<LlamaStyleType, LlamaStyleEntry>> = (() => {
  const entries = data.types as unknown as LlamaStyleEntry[];
  const types = entries.map((e) => e.modelType);
  if (types.join() !== LLAMA_STYLE_TYPES.join()) throw new Error(`llamaStyle.json describes ${types.join(', ')}, not ${LLAMA_STYLE_TYPES.join(', ')}`);
  return Object.fromEntries(entries.map((e) => [e.modelType, e])) as Record<LlamaStyleType, LlamaStyleEntry>;
})();

export function isLlamaStyle(modelType: string): modelType is LlamaStyleType {
  return (LLAMA_STYLE_TYPES as readonly string[]).includes(modelType);
}
