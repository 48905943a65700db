import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { SourceRange } from '../analysis/modelDescription';

export type { SyntaxNode };

/** Zero-based range of a node, the shape editors and the JSON report use. */
export function rangeOf(node: SyntaxNode): SourceRange {
  return {
    startLine: node.startPosition.row,
    startColumn: node.startPosition.column,
    endLine: node.endPosition.row,
    endColumn: node.endPosition.column,
  };
}

/** `a.b.c` for identifiers and attribute chains; undefined for anything else (calls, subscripts). */
export function dottedName(node: SyntaxNode | null): string | undefined {
  if (!node) return undefined;
  if (node.type === 'identifier') return node.text;
  if (node.type === 'attribute') {
    const object = dottedName(node.childForFieldName('object'));
    const attribute = node.childForFieldName('attribute');
    return object && attribute ? `${object}.${attribute.text}` : undefined;
  }
  return undefined;
}

export interface CallParts {
  readonly callee: string;
  readonly positional: SyntaxNode[];
  readonly keywords: ReadonlyMap<string, SyntaxNode>;
  /** `*args` arguments, which hide how many positional arguments there are. */
  readonly splats: SyntaxNode[];
}

/** Splits a `call` node into callee name, positional and keyword arguments. */
export function callParts(call: SyntaxNode): CallParts | undefined {
  if (call.type !== 'call') return undefined;
  const callee = dottedName(call.childForFieldName('function'));
  const argumentList = call.childForFieldName('arguments');
  if (!callee || !argumentList) return undefined;
  const positional: SyntaxNode[] = [];
  const keywords = new Map<string, SyntaxNode>();
  const splats: SyntaxNode[] = [];
  for (const argument of argumentList.namedChildren) {
    if (!argument || argument.type === 'comment') continue;
    if (argument.type === 'keyword_argument') {
      const name = argument.childForFieldName('name');
      const value = argument.childForFieldName('value');
      if (name && value) keywords.set(name.text, value);
    } else if (argument.type === 'list_splat' || argument.type === 'dictionary_splat') {
      splats.push(argument);
    } else {
      positional.push(argument);
    }
  }
  return { callee, positional, keywords, splats };
}

/** Every descendant of the given types, in source order. */
export function descendantsOfType(node: SyntaxNode, types: readonly string[]): SyntaxNode[] {
  return node.descendantsOfType(types as string[]).filter((n): n is SyntaxNode => n !== null);
}

/** The statements directly inside a module or block, skipping comments. */
export function statementsOf(node: SyntaxNode): SyntaxNode[] {
  return node.namedChildren.filter((n): n is SyntaxNode => n !== null && n.type !== 'comment');
}

/** The string value of a plain string literal, without prefixes or interpolation. */
export function stringValue(node: SyntaxNode): string | undefined {
  if (node.type !== 'string') return undefined;
  const parts = node.namedChildren.filter((n) => n?.type === 'string_content');
  if (node.namedChildren.some((n) => n?.type === 'interpolation')) return undefined;
  return parts.map((p) => p?.text ?? '').join('');
}
