import type { Tree } from 'web-tree-sitter';
import { ImportTable } from './imports';
import type { AnalysisNote, SourceAnalysis } from './modelDescription';
import { ModelFinder } from './modelFinder';
import { moduleScope } from './moduleScope';
import { findTrainingSetup } from './trainingSetup';

/** From a syntax tree to the models and training set-up the script describes. Never runs the code. */
export function analyzeSource(tree: Tree): SourceAnalysis {
  const root = tree.rootNode;
  const imports = ImportTable.fromModule(root);
  const scope = moduleScope(root);
  const finder = new ModelFinder(root, imports, scope);
  const models = finder.findModels();
  const notes: AnalysisNote[] = [...finder.notes];
  if (root.hasError) {
    notes.unshift({ severity: 'warning', message: 'The file has syntax errors; estimates use the parts that parse.' });
  }
  if (models.length === 0) {
    notes.push({ severity: 'info', message: 'No PyTorch model found: no nn.Sequential(...) or nn.Module subclass in this file.' });
  }
  return { models, setup: findTrainingSetup(root, imports, scope), notes, hasSyntaxErrors: root.hasError };
}
