/**
 * What the set-up readers (fineTuningSetup.ts, frameworkSetup.ts, shardingSetup.ts, preferenceSetup.ts,
 * trainingSetup.ts) need of a recorded library call: the argument a value was read from, so that
 * the value points at it, and the call's short name for the words that say where it came from.
 */
import type { SyntaxNode } from '../parsing/syntax';
import type { CallEvent } from './interpreter/interpreter';
import type { PyValue } from './interpreter/pyValues';

/** Lightning's Trainer and Fabric, which take the precision, the strategy, the devices and the accumulation. */
export const LIGHTNING = /^(lightning|pytorch_lightning|lightning\.pytorch)(\.trainer(\.trainer)?|\.fabric)?\.(Trainer|Fabric)$/;

/** The Trainer's arguments: transformers' TrainingArguments (and Seq2Seq's), TRL's configs (SFTConfig, DPOConfig...), which extend them. */
export const HF_ARGUMENTS = /^(transformers(\.training_args)?\.(Seq2Seq)?TrainingArguments|trl(\.trainer)?\.\w+Config)$/;

/** `TrainingArguments` for `transformers.training_args.TrainingArguments`. */
export const simpleName = (qualified: string): string => qualified.slice(qualified.lastIndexOf('.') + 1);

/** The `name=...` keyword argument of the call, or the whole call where it has none (a default). */
export function argumentNode(call: CallEvent, name: string): SyntaxNode {
  const argument = call.node.childForFieldName('arguments')?.namedChildren.find((a) => a.type === 'keyword_argument' && a.childForFieldName('name')?.text === name);
  return argument ?? call.node;
}

/** An argument that counts something (a batch, a length): a whole number above zero, else undefined. */
export function positiveInteger(value: PyValue | undefined): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}
