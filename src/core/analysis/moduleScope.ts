import { statementsOf, type SyntaxNode } from '../parsing/syntax';
import { Scope, evaluate } from './values';

/** The first `a = b` inside an expression statement, or undefined. */
export function assignmentOf(statement: SyntaxNode): SyntaxNode | undefined {
  if (statement.type === 'assignment') return statement;
  if (statement.type !== 'expression_statement') return undefined;
  const inner = statement.namedChildren[0];
  return inner?.type === 'assignment' ? inner : undefined;
}

/**
 * Module-level constants in source order (`BATCH_SIZE = 128`, `HIDDEN = 4 * 256`). A later
 * assignment replaces an earlier one, as it would when the module runs top to bottom.
 */
export function moduleScope(root: SyntaxNode): Scope {
  const scope = new Scope();
  for (const statement of statementsOf(root)) {
    const assignment = assignmentOf(statement);
    const left = assignment?.childForFieldName('left');
    const right = assignment?.childForFieldName('right');
    if (left?.type === 'identifier' && right) scope.set(left.text, evaluate(right, scope));
  }
  return scope;
}
