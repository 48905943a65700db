/**
 * A PEFT LoRA adapter applied to a layer table, for a model the fine-tuning model does not take
 * (an image model: no vocabulary, no logits), so the other estimators see the step PEFT makes of
 * `get_peft_model(model, LoraConfig(...))`: beside each targeted Linear, lora_A (rank x in) and
 * lora_B (out x rank), trained, after lora_dropout's copy of the Linear's input; every other
 * parameter frozen, but those of `modules_to_save` (a new head).
 *
 * PEFT matches a target by the module's dotted name: the name itself or a suffix after a dot;
 * "all-linear" is every Linear. The catalog follows transformers 5's names (`attention.q_proj`,
 * `mlp.fc1`) where a script written against 4.x names `query`, `value`, `intermediate.dense`: those
 * are taken for theirs.
 */
import type { AdapterSetup } from '../analysis/modelDescription';
import type { LayerRow, LayerTable } from './layerTable';

/** transformers 4.x module names and their 5.x names in the catalog's tables (ViT, Swin). */
const FOUR_TO_FIVE: Readonly<Record<string, string>> = {
  query: 'q_proj',
  key: 'k_proj',
  value: 'v_proj',
  'attention.output.dense': 'attention.o_proj',
  'intermediate.dense': 'mlp.fc1',
  'output.dense': 'mlp.fc2',
};

/** PEFT's default targets where target_modules is not given (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING for ViT, Swin, CLIP). */
const DEFAULT_TARGETS = ['query', 'value', 'q_proj', 'v_proj'];

export interface LoraTable {
  readonly table: LayerTable;
  /** Paths of the adapted Linear rows. */
  readonly adapted: readonly string[];
  /** Parameters LoRA adds (and trains). */
  readonly loraParams: number;
}

const matches = (path: string, name: string): boolean => path === name || path.endsWith(`.${name}`);

/** The row is one of the named modules or inside one (PEFT trains a `modules_to_save` module whole). */
function under(path: string, names: readonly string[]): boolean {
  const parts = path.split('.');
  return parts.some((_, index) => names.some((name) => matches(parts.slice(0, index + 1).join('.'), name)));
}

function targeted(row: LayerRow, targets: AdapterSetup['targetModules']): boolean {
  if (row.type !== 'Linear') return false;
  if (targets === 'all-linear') return true;
  const names = targets === undefined ? DEFAULT_TARGETS : typeof targets === 'string' ? [targets] : targets;
  return names.some((name) => matches(row.path, name) || (FOUR_TO_FIVE[name] !== undefined && matches(row.path, FOUR_TO_FIVE[name])));
}

/**
 * A Linear's input width from its parameters and output width: in x out, plus out with a bias. Both
 * readings divide; the one a multiple of 8 is taken (hidden sizes are), else the one without a bias.
 */
function inputWidth(params: number, out: number): number {
  const whole = Math.floor(params / out);
  return whole % 8 !== 0 && (whole - 1) % 8 === 0 && whole > 1 ? whole - 1 : whole;
}

/** The table as PEFT's LoRA trains it, or undefined where no Linear row is a target. */
export function withLoraAdapter(table: LayerTable, adapter: AdapterSetup): LoraTable | undefined {
  const rank = adapter.rank ?? 8;
  const keep = adapter.modulesToSave ?? [];
  const adapted: string[] = [];
  let loraParams = 0;
  const rows: LayerRow[] = [];
  const seen = new Set<string>();
  for (const row of table.rows) {
    const saved = under(row.path, keep);
    rows.push(row.params !== null && row.params > 0 ? { ...row, trainable: row.trainable && saved } : row);
    const out = row.outputShape?.at(-1);
    if (!targeted(row, adapter.targetModules) || saved || out === undefined || row.params === null || row.activations === null) continue;
    // A module called twice is adapted once: its LoRA weights are counted at the first call, its activations at each.
    const inFeatures = inputWidth(row.params, out);
    const positions = row.activations / out;
    const lead = row.outputShape!.slice(0, -1);
    const first = !seen.has(row.path);
    seen.add(row.path);
    if (first) adapted.push(row.path);
    const weights = (n: number) => (first ? n : 0);
    if (adapter.dropout !== undefined) rows.push({ path: `${row.path}.lora_dropout.default`, type: 'Dropout', outputShape: [...lead, inFeatures], activations: positions * inFeatures, params: 0, trainable: true });
    rows.push({ path: `${row.path}.lora_A.default`, type: 'Linear', outputShape: [...lead, rank], activations: positions * rank, params: weights(rank * inFeatures), trainable: true });
    rows.push({ path: `${row.path}.lora_B.default`, type: 'Linear', outputShape: [...lead, out], activations: positions * out, params: weights(rank * out + (adapter.dora ? out : 0)), trainable: true });
    loraParams += weights(rank * (inFeatures + out) + (adapter.dora ? out : 0));
  }
  if (adapted.length === 0) return undefined;
  const trainableParams = rows.reduce((sum, row) => sum + (row.trainable && row.params ? row.params : 0), 0);
  const params = table.totals.params + loraParams;
  return { table: { ...table, rows, totals: { ...table.totals, params, trainableParams } }, adapted, loraParams };
}
