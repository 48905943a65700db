/**
 * TRL's preference and reinforcement trainers as the fine-tuning model counts them (fineTuning.ts's
 * `preference`): `DPOTrainer`, `ORPOTrainer` and `CPOTrainer` run each prompt's chosen and rejected
 * answers together; `KTOTrainer` runs single answers with DPO's reference; `GRPOTrainer` generates
 * completions and trains on prompt and completion, its logits over the completion only. What each
 * keeps as its reference is read from the trainer's arguments and its config (TRL 0.17's defaults
 * where the script gives none).
 */
import type { CallEvent } from './interpreter/interpreter';
import type { Found, PreferenceSetup } from './modelDescription';
import { argumentNode, positiveInteger, simpleName } from './callArguments';
import { PREFERENCE_TRAINERS } from './interpreter/fineTuningLibraries';

// Typed as the set-up's trainers: a name added to the list and not to PreferenceSetup does not compile.
const TRAINERS: readonly PreferenceSetup['trainer'][] = PREFERENCE_TRAINERS;
const PREFERENCE_TRAINER = new RegExp(`^trl(\\.\\w+)*\\.(${TRAINERS.join('|')})Trainer$`);
const GRPO_CONFIG = /^trl(\.\w+)*\.GRPOConfig$/;

/** GRPOConfig's defaults in TRL 0.17: prompts cut to 512 tokens, completions to 256, the KL term's beta 0.04. */
export const GRPO_DEFAULTS = { maxPromptLength: 512, maxCompletionLength: 256, beta: 0.04 } as const;

/** The script's GRPOConfig, if it makes one. */
const grpoConfig = (events: readonly CallEvent[]) => events.find((c) => GRPO_CONFIG.test(c.qualified));

/**
 * The trainer and its reference: for DPO and KTO, whether the script passes its own `ref_model=`, or
 * `precompute_ref_log_probs=True` (or DPO's `reference_free=True`) in its config leaves the reference
 * out of the step; for GRPO, whether `beta=0.0` drops the KL term and with it the reference.
 */
export function preferenceTraining(events: readonly CallEvent[]): Found<PreferenceSetup> | undefined {
  const call = events.find((c) => PREFERENCE_TRAINER.test(c.qualified));
  if (!call) return undefined;
  const trainer = simpleName(call.qualified).replace(/Trainer$/, '') as PreferenceSetup['trainer'];
  if (trainer === 'GRPO') return grpo(events, call);
  if (trainer === 'ORPO' || trainer === 'CPO') return { value: { trainer, reference: 'none' }, node: call.node, origin: `${trainer}Trainer(...): chosen and rejected answers run together, no reference model` };
  const refModel = call.kwargs.get('ref_model');
  if (refModel !== undefined && refModel !== null) return { value: { trainer, reference: 'model' }, node: argumentNode(call, 'ref_model'), origin: `${trainer}Trainer(ref_model=...): a reference model of its own beside the trained one` };
  for (const config of events) {
    if (simpleName(config.qualified) !== `${trainer}Config` || !config.qualified.startsWith('trl')) continue;
    for (const keyword of ['precompute_ref_log_probs', 'reference_free']) {
      if (config.kwargs.get(keyword) === true) return { value: { trainer, reference: 'precomputed' }, node: argumentNode(config, keyword), origin: `${trainer}Config(${keyword}=True): no reference forward in the training step` };
    }
  }
  const answers = trainer === 'DPO' ? 'chosen and rejected answers run together' : 'answers marked desirable or not, with mismatched ones for the KL term';
  return { value: { trainer, reference: 'default' }, node: call.node, origin: `${trainer}Trainer(...): ${answers}, and a reference forward without gradients` };
}

function grpo(events: readonly CallEvent[], call: CallEvent): Found<PreferenceSetup> {
  const config = grpoConfig(events);
  const completionTokens = positiveInteger(config?.kwargs.get('max_completion_length')) ?? GRPO_DEFAULTS.maxCompletionLength;
  const beta = config?.kwargs.get('beta');
  const withoutKl = beta === 0;
  const betaOrigin = withoutKl ? 'beta=0.0: no KL term, no reference model' : typeof beta === 'number' ? `beta=${beta}: a reference model for the KL term` : `beta ${GRPO_DEFAULTS.beta} (TRL 0.17's default): a reference model for the KL term`;
  return {
    value: { trainer: 'GRPO', reference: withoutKl ? 'none' : 'default', completionTokens },
    node: withoutKl && config ? argumentNode(config, 'beta') : call.node,
    origin: `GRPOTrainer(...): completions generated, then trained with logits over their ${completionTokens} tokens; ${betaOrigin}`,
  };
}

/** GRPO's sequence: a prompt of at most max_prompt_length tokens and its completion of at most max_completion_length (TRL 0.17's defaults 512 and 256). */
export function grpoSequenceLength(events: readonly CallEvent[]): Found<number> | undefined {
  const call = events.find((c) => /^trl(\.\w+)*\.GRPOTrainer$/.test(c.qualified));
  if (!call) return undefined;
  const config = grpoConfig(events);
  const prompt = positiveInteger(config?.kwargs.get('max_prompt_length'));
  const completion = positiveInteger(config?.kwargs.get('max_completion_length'));
  const value = (prompt ?? GRPO_DEFAULTS.maxPromptLength) + (completion ?? GRPO_DEFAULTS.maxCompletionLength);
  const part = (n: number | undefined, name: string, fallback: number) => (n !== undefined ? `${name}=${n}` : `${name} ${fallback} (TRL 0.17's default)`);
  const node = config && (prompt !== undefined || completion !== undefined) ? argumentNode(config, prompt !== undefined ? 'max_prompt_length' : 'max_completion_length') : call.node;
  return {
    value,
    node,
    origin: `GRPOConfig: a prompt and its completion, ${part(prompt, 'max_prompt_length', GRPO_DEFAULTS.maxPromptLength)} and ${part(completion, 'max_completion_length', GRPO_DEFAULTS.maxCompletionLength)} (the estimate takes both at their longest)`,
  };
}
