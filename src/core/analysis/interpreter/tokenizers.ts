// The vocabulary of a tokenizer loaded with `from_pretrained`: models sized by `tokenizer.vocab_size`
// or `len(tokenizer)` get the checkpoint's vocabulary where the Hugging Face catalog knows the
// checkpoint, else a named assumption the user can pin (`--set vocab_size=N`).
import type { SyntaxNode } from '../../parsing/syntax';
import { findCheckpoint } from '../../catalog/hf/checkpoints';
import type { Evaluator } from './evaluator';
import { kindOf, unresolved, type ExternalValue, type PyValue } from './pyValues';

/** Attributes of a tokenizer that give its vocabulary's size. */
const VOCABULARY_ATTRIBUTES = new Set(['vocab_size']);

export function isTokenizer(value: PyValue | undefined): value is ExternalValue & { tokenizer: { checkpoint?: string } } {
  return kindOf(value) === 'external' && (value as ExternalValue).tokenizer !== undefined;
}

export function isVocabularyAttribute(name: string): boolean {
  return VOCABULARY_ATTRIBUTES.has(name);
}

/** `tokenizer.vocab_size`, `len(tokenizer)`: the size, read as a configuration value with its origin. */
export function tokenizerVocabulary(interp: Evaluator, tokenizer: ExternalValue & { tokenizer: { checkpoint?: string } }, node: SyntaxNode): PyValue {
  const checkpoint = tokenizer.tokenizer.checkpoint;
  const known = checkpoint !== undefined ? findCheckpoint(checkpoint) : undefined;
  const size = known?.config.vocab_size;
  const vocabulary = typeof size === 'number' && Number.isInteger(size) && size > 0 ? { checkpoint: known!.name, size } : undefined;
  if (interp.config) return interp.config.tokenizerVocabulary(vocabulary, node);
  return vocabulary?.size ?? unresolved(node.text, `the vocabulary of ${checkpoint ?? 'a tokenizer whose checkpoint is not a constant'}`);
}
