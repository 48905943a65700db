/**
 * Where a script's settings come from besides its own literals: environment variables with a
 * default (`int(os.environ.get("BATCH_SIZE", "1000"))`), configuration files it loads
 * (`yaml.safe_load(open("configs/train.yaml"))`, `json.load`, `tomllib.load`, `OmegaConf.load`),
 * and the values the user assumes in their place (the CLI's `--set name=value`, the
 * `gpuEstimator.assume` setting), which replace argparse defaults, config keys, environment
 * defaults, dataclass field defaults, the script's top-level constants and sizes that come from
 * the data. Every value the script reads from one of these is recorded as a reading with its
 * origin (file and line), and shown among the estimate's assumptions.
 *
 * One per analysis. Files are read through the project's reader (so an edit to a config file
 * re-estimates the script that read it); without a project, nothing is read and a note says so.
 */
import { rangeOf, type SyntaxNode } from '../../parsing/syntax';
import { dirnameOf, isInside, joinPath, normalizePath } from '../../project/projectFiles';
import type { AnalysisNote, ConfigReading } from '../modelDescription';
import { isList, isUnresolvedValue, kindOf, unresolved, type DictValue, type InstanceValue, type PyValue } from '../interpreter/pyValues';
import { formatOfPath, isConfigMap, readConfigText, type ConfigFormat, type ConfigNode } from './configText';

/** A value the user assumes for a name: a number, a string or a boolean. */
export type AssumedValue = number | string | boolean;

/** The project's files as the configuration reader sees them. */
export interface ConfigFiles {
  /** The text of a file (recorded, so a changed file re-estimates the script), or undefined. */
  read(path: string): string | undefined;
  readonly root: string;
  readonly scriptDir: string;
  /** A path as notes show it (relative to the root). */
  shown(path: string): string;
  /** A Python file of the project parsed (for `exec(open("config/train_x.py").read())`); undefined when it cannot be. */
  parse?(path: string, text: string): SyntaxNode | undefined;
}

/** A file opened by the script (`open(path)`, `Path(path)`): its resolved path and text. */
interface OpenedFile {
  readonly path: string;
  readonly text: string | undefined;
}

interface DictOrigin {
  /** The dotted path of the mapping in the composed configuration ('' for the top level). */
  readonly prefix: string;
  /** The file and 1-based line of each key (one mapping may gather keys of several files: Hydra's defaults list). */
  readonly keys: Map<string, { readonly file: string; readonly line: number }>;
  /** Keys whose value the user set. */
  readonly assumed: Set<string>;
}

export type { ConfigReading };

/** Conventional values for sizes that come from the data, used until the user pins them. */
export const DATA_DERIVED_DEFAULTS = {
  'vocabulary size': { value: 50_257, setting: 'vocab_size', why: "GPT-2's BPE vocabulary" },
  'number of classes': { value: 1_000, setting: 'num_classes', why: "ImageNet's classes" },
} as const;

/** A vocabulary by the name it is bound to, or by what is counted (`len(corpus.dictionary)`, `len(chars)`). */
const VOCABULARY_NAME = /vocab|^n_?tokens?$|^num_tokens$|^n_?words$|^n_?chars$/i;
const VOCABULARY_SOURCE = /vocab|dictionary|itos|stoi|word2idx|idx2word|tokenizer|\bchars\b/i;
const CLASSES_NAME = /class|label|categor/i;
const CLASSES_SOURCE = /classes|labels|class_to_idx|categories/i;
const MAX_READINGS = 200;
/** Files whose text `.read()` gives the loaders and exec(): configuration, by its extension (nanoGPT's configs are Python). */
const CONFIG_FILE = /\.(ya?ml|json|toml|py)$/i;

/** `BATCH_SIZE`, `batch-size` and `batch_size` are one name to the user. */
const normalName = (name: string) => name.trim().toLowerCase().replace(/-/g, '_');

export class ConfigSources {
  readonly readings: ConfigReading[] = [];
  readonly notes: AnalysisNote[] = [];
  private readonly assumedByName = new Map<string, { key: string; value: AssumedValue }>();
  private readonly origins = new WeakMap<object, DictOrigin>();
  private readonly opened = new WeakMap<object, OpenedFile>();
  /** Texts the script read from files (`f.read()`), so that loading the text still knows its file. */
  private readonly textFiles = new Map<string, string>();

  constructor(
    assumed: Readonly<Record<string, AssumedValue>> = {},
    private readonly files?: ConfigFiles,
    /** The script's own command line after its name (`python main.py fit --config c.yaml`: fit, --config, c.yaml); none by default, as `python train.py` runs it. */
    readonly scriptArguments: readonly string[] = [],
  ) {
    for (const [key, value] of Object.entries(assumed)) this.assumedByName.set(normalName(key), { key, value });
  }

  /** The value the user assumes for this name (exact, or ignoring case and `-`/`_`). */
  assumed(name: string): AssumedValue | undefined {
    return this.assumedByName.get(normalName(name))?.value;
  }

  /** Whether the dict holds values read from a configuration file. */
  isConfigDict(value: PyValue | undefined): boolean {
    return typeof value === 'object' && value !== null && this.origins.has(value);
  }

  /**
   * `sys.argv`: the script's name and the arguments it is run with. Without given arguments it is
   * run as `python train.py`, so `sys.argv[1] if len(sys.argv) > 1 else "config.json"` takes the
   * script's own default, as argparse defaults are taken. A fresh list: the script may change it.
   */
  commandLine(script: string): PyValue[] {
    return [script, ...this.scriptArguments];
  }

  // ---------------------------------------------------------------- environment variables

  /** `os.environ.get(name, default)`, `os.getenv(name, default)`, `os.environ[name]` (no default). */
  environ(name: PyValue, fallback: PyValue | undefined, node: SyntaxNode): PyValue {
    if (typeof name !== 'string') return unresolved(node.text, 'environment variable with an unknown name');
    const assumed = this.assumed(name);
    if (assumed !== undefined) {
      this.read({ key: name, value: String(assumed), origin: `environment variable ${name}, set by the user` }, node);
      return String(assumed);
    }
    if (fallback === undefined || fallback === null || isUnresolvedValue(fallback)) {
      this.note(node, `Environment variable ${name} has no default the analysis can read; values that depend on it are unknown (set one with --set ${name}=... or the gpuEstimator.assume setting).`);
      return unresolved(node.text, `environment variable ${name}`);
    }
    this.read({ key: name, value: plain(fallback), origin: `environment variable ${name} unset: the script's default` }, node);
    return fallback;
  }

  // ---------------------------------------------------------------- files

  /** `open(path)`, `Path(path)`: a handle the loaders and `.read()` understand. */
  open(path: PyValue, className: string): PyValue {
    const handle: InstanceValue = { kind: 'instance', className, attrs: new Map([['name', path]]) };
    if (typeof path === 'string') this.opened.set(handle, { path, text: undefined });
    return handle;
  }

  /** `f.read()`, `path.read_text()`: the file's text, remembered as coming from that file. */
  readText(handle: PyValue, node: SyntaxNode): PyValue {
    // A data file (`open("shakespeare.txt").read()`) is not read: only configuration is.
    const opened = typeof handle === 'object' && handle !== null ? this.opened.get(handle) : undefined;
    if (!opened || !CONFIG_FILE.test(opened.path)) return unresolved(node.text, 'the text of a data file');
    const file = this.fileOf(handle, node);
    if (!file?.text) return unresolved(node.text, 'file not read');
    if (this.textFiles.size < 64) this.textFiles.set(file.text, file.path);
    return file.text;
  }

  /** Whether the value is a handle `open()` or `Path()` made. */
  isHandle(value: PyValue | undefined): boolean {
    return typeof value === 'object' && value !== null && this.opened.has(value);
  }

  /**
   * `yaml.safe_load(f)`, `json.load(f)`, `json.loads(text)`, `OmegaConf.load(path)`: the file's
   * mapping as a dict whose keys remember their lines, the user's assumed values in place.
   */
  load(source: PyValue, format: ConfigFormat | 'by-name', node: SyntaxNode, prefix = ''): PyValue {
    let file: OpenedFile | undefined;
    if (typeof source === 'string' && this.textFiles.has(source)) file = { path: this.textFiles.get(source)!, text: source };
    else if (typeof source === 'string' && format === 'by-name') file = this.fileOf(this.open(source, 'Path'), node);
    else file = this.fileOf(source, node);
    if (!file) return unresolved(node.text, 'configuration not read');
    if (file.text === undefined) return unresolved(node.text, `${file.path} not read`);
    const shown = this.files ? this.files.shown(file.path) : file.path;
    const read = readConfigText(file.text, format === 'by-name' ? formatOfPath(file.path) : format);
    for (const problem of read.problems.slice(0, 3)) this.note(node, `Configuration ${shown}: ${problem}.`);
    if (!read.root) return unresolved(node.text, `${shown} could not be read`);
    return this.toValue(read.root, shown, prefix);
  }

  /**
   * `@hydra.main(config_path="conf", config_name="config")`: the configuration the decorated
   * function receives, composed as Hydra composes it: each `group: option` of the defaults list
   * is `<config_path>/<group>/<option>.yaml` under the key `group`, and the primary file's own
   * keys override them (`_self_` last, Hydra 1.1's default).
   */
  hydraConfig(configPath: string, configName: string, node: SyntaxNode): PyValue {
    const file = (name: string) => `${configPath.replace(/\/+$/, '') || '.'}/${name.endsWith('.yaml') ? name : `${name}.yaml`}`;
    const primary = this.load(file(configName), 'by-name', node);
    if (kindOf(primary) !== 'dict') return primary;
    const composed = primary as DictValue;
    const defaults = composed.entries.get('defaults');
    composed.entries.delete('defaults');
    if (!isList(defaults)) return composed;
    for (const item of defaults) {
      if (item === '_self_') continue;
      if (typeof item === 'string') {
        // Another config of the same folder, merged at the top.
        this.underlay(composed, this.load(file(item), 'by-name', node));
        continue;
      }
      const entry = kindOf(item) === 'dict' ? [...(item as DictValue).entries][0] : undefined;
      const group = entry?.[0];
      if (!entry || !group || typeof entry[1] !== 'string' || !/^[A-Za-z0-9_/]+$/.test(group)) {
        this.note(node, `Hydra defaults entry ${plain(item)} is not read (only \`group: option\` and \`_self_\` are); its values are missing from the configuration.`);
        continue;
      }
      const key = group.split('/').pop()!;
      const loaded = this.load(`${configPath.replace(/\/+$/, '') || '.'}/${group}/${entry[1]}.yaml`, 'by-name', node, key);
      const own = composed.entries.get(key);
      if (kindOf(own) === 'dict' && kindOf(loaded) === 'dict') this.underlay(own as DictValue, loaded);
      else if (own === undefined) composed.entries.set(key, loaded);
    }
    return composed;
  }

  /** Puts `below`'s keys under `dict`'s: a key `dict` has keeps its value and origin (nested mappings merge). */
  underlay(dict: DictValue, below: PyValue): void {
    if (kindOf(below) !== 'dict') return;
    const origin = this.origins.get(dict);
    const belowOrigin = this.origins.get(below as DictValue);
    for (const [key, value] of (below as DictValue).entries) {
      const own = dict.entries.get(key);
      if (own === undefined) {
        dict.entries.set(key, value);
        const place = belowOrigin?.keys.get(key);
        if (origin && place) origin.keys.set(key, place);
        if (origin && belowOrigin?.assumed.has(key)) origin.assumed.add(key);
      } else if (kindOf(own) === 'dict' && kindOf(value) === 'dict') this.underlay(own as DictValue, value);
    }
  }

  private toValue(node: ConfigNode, file: string, prefix: string): PyValue {
    const { value } = node;
    if (isConfigMap(value)) {
      const entries = new Map<string, PyValue>();
      const keys = new Map<string, { file: string; line: number }>();
      const assumed = new Set<string>();
      for (const [key, child] of value) {
        const path = prefix ? `${prefix}.${key}` : key;
        const user = isConfigMap(child.value) || Array.isArray(child.value) ? undefined : (this.assumedByName.get(normalName(path)) ?? this.assumedByName.get(normalName(key)))?.value;
        entries.set(key, user ?? this.toValue(child, file, path));
        keys.set(key, { file, line: child.line });
        if (user !== undefined) assumed.add(key);
      }
      const dict: DictValue = { kind: 'dict', entries };
      this.origins.set(dict, { prefix, keys, assumed });
      return dict;
    }
    if (Array.isArray(value)) return (value as readonly ConfigNode[]).map((item, i) => this.toValue(item, file, `${prefix}.${i}`));
    return value as PyValue;
  }

  /** A read of `dict[key]` (subscript, `.get`, attribute, `**dict`): recorded when the dict came from a configuration file. */
  readKey(dict: PyValue, key: string, value: PyValue | undefined, node: SyntaxNode): void {
    if (typeof dict !== 'object' || dict === null) return;
    const origin = this.origins.get(dict);
    if (!origin || value === undefined || !(isScalar(value) || (isList(value) && value.length <= 16 && value.every(isScalar)))) return;
    const path = origin.prefix ? `${origin.prefix}.${key}` : key;
    const place = origin.keys.get(key);
    if (origin.assumed.has(key)) this.read({ key: path, value: plain(value), origin: `set by the user, in place of ${place ? `${place.file} line ${place.line}` : 'the configuration'}` }, node);
    // A key the script added (`cfg["x"] = 1`) is no longer the file's.
    else if (place) this.read({ key: path, value: plain(value), origin: 'config file', configLine: place }, node);
  }

  /**
   * `exec(open("config/train_small.py").read())`: the file's syntax, to run in the script's own
   * scope (nanoGPT's configuration files and its configurator.py); undefined when the text did not
   * come from a file of the project.
   */
  execSource(text: PyValue, node: SyntaxNode): { root: SyntaxNode; file: string } | undefined {
    if (typeof text !== 'string') return undefined;
    const path = this.textFiles.get(text);
    if (path === undefined || !/\.py$/i.test(path) || !this.files?.parse) return undefined;
    const root = this.files.parse(path, text);
    const file = this.files.shown(path);
    if (!root) this.note(node, `${file} could not be parsed; what it sets is unknown.`);
    else if (/sys\.argv/.test(text)) this.note(node, `${file} reads its overrides from the command line (python train.py config/x.py --key=value); the analysis uses the script's values: set them with --set key=value or the gpuEstimator.assume setting.`);
    return root && { root, file };
  }

  /** After an exec'd configuration file ran: what it set, as readings, and the user's values over it. */
  afterExec(file: string, root: SyntaxNode, set: (name: string, value: PyValue) => void, get: (name: string) => PyValue | undefined): void {
    for (const statement of root.namedChildren) {
      const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
      const target = assignment?.type === 'assignment' ? assignment.childForFieldName('left') : undefined;
      if (!assignment || target?.type !== 'identifier') continue;
      const line = assignment.startPosition.row + 1;
      const assumed = this.assumed(target.text);
      if (assumed !== undefined) {
        set(target.text, assumed);
        this.read({ key: target.text, value: String(assumed), origin: `set by the user, in place of ${file} line ${line}` }, assignment);
        continue;
      }
      const value = get(target.text);
      if (value !== undefined && isScalar(value)) this.read({ key: target.text, value: plain(value), origin: 'config file', configLine: { file, line } }, assignment);
    }
  }

  /** `cfg["batch_size"] = 64`: the script set the key itself; reads of it are no longer the file's. */
  overwritten(dict: PyValue, key: string): void {
    if (typeof dict !== 'object' || dict === null) return;
    const origin = this.origins.get(dict);
    origin?.keys.delete(key);
    origin?.assumed.delete(key);
  }

  // ---------------------------------------------------------------- values the user assumes

  /** `parser.add_argument("--n-layer", default=12)`: the user's value in place of the default. */
  argumentDefault(name: string, fallback: PyValue, node: SyntaxNode): PyValue {
    const assumed = this.assumed(name);
    if (assumed === undefined) return fallback;
    this.read({ key: name, value: String(assumed), origin: `set by the user, in place of the --${name.replace(/_/g, '-')} default${isScalar(fallback) ? ` ${plain(fallback)}` : ''}` }, node);
    return assumed;
  }

  /** `batch_size = 12` at the script's top level, or a dataclass field's default: the user's value in its place. */
  constantDefault(name: string, fallback: PyValue, node: SyntaxNode, what: string): PyValue {
    const assumed = this.assumed(name);
    if (assumed === undefined || !isScalar(fallback)) return fallback;
    this.read({ key: name, value: String(assumed), origin: `set by the user, in place of ${what} ${plain(fallback)}` }, node);
    return assumed;
  }

  /**
   * `ntokens = len(corpus.dictionary)`, `num_classes = len(dataset.classes)`: a size the data
   * decides. Named after what it is; the user's value, else a conventional one, said so.
   */
  dataDerived(name: string, expression: SyntaxNode, node: SyntaxNode): PyValue | undefined {
    const source = expression.text;
    const kind = VOCABULARY_NAME.test(name) || VOCABULARY_SOURCE.test(source) ? 'vocabulary size' : CLASSES_NAME.test(name) || CLASSES_SOURCE.test(source) ? 'number of classes' : undefined;
    if (!kind) return undefined;
    const fallback = DATA_DERIVED_DEFAULTS[kind];
    const assumed = this.assumed(name) ?? this.assumed(fallback.setting);
    if (typeof assumed === 'number' && Number.isInteger(assumed) && assumed > 0) {
      this.read({ key: name, value: String(assumed), origin: `from the data (${expression.text.slice(0, 40)}), set by the user`, dataDerived: kind }, node);
      return assumed;
    }
    this.read(
      {
        key: name,
        value: String(fallback.value),
        origin: `from the data (${expression.text.slice(0, 40)}); assumed as ${fallback.why}: pin it with --set ${name}=N or the gpuEstimator.assume setting`,
        dataDerived: kind,
      },
      node,
    );
    return fallback.value;
  }

  // ---------------------------------------------------------------- internals

  private fileOf(handle: PyValue, node: SyntaxNode): OpenedFile | undefined {
    if (typeof handle !== 'object' || handle === null) return undefined;
    const opened = this.opened.get(handle);
    if (!opened) return undefined;
    if (opened.text !== undefined) return opened;
    const found = this.resolve(opened.path, node);
    if (!found) return { path: opened.path, text: undefined };
    this.opened.set(handle, found);
    return found;
  }

  /** A relative path is looked for from the script's folder, then from the project root (where scripts are usually run). */
  private resolve(path: string, node: SyntaxNode): OpenedFile | undefined {
    const files = this.files;
    if (!files) {
      this.note(node, `${path} is not read: the script is estimated without its project (the CLI reads it; the editor reads it for a saved file).`);
      return undefined;
    }
    const absolute = path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path);
    const candidates = absolute ? [normalizePath(path)] : [joinPath(files.scriptDir, path), joinPath(files.root, path)];
    for (const candidate of candidates) {
      if (!isInside(candidate, files.root)) {
        this.note(node, `${path} is outside the project root ${files.root}; it is not read.`);
        return undefined;
      }
      const text = files.read(candidate);
      if (text !== undefined) return { path: candidate, text };
    }
    this.note(node, `Configuration file ${path} not found (looked in ${[...new Set(candidates.map((c) => files.shown(dirnameOf(c))))].join(' and ')}); the values the script reads from it are unknown.`);
    return undefined;
  }

  private read(reading: Omit<ConfigReading, 'range'>, node: SyntaxNode): void {
    if (this.readings.length >= MAX_READINGS) return;
    if (this.readings.some((r) => r.key === reading.key && r.origin === reading.origin && r.value === reading.value)) return;
    this.readings.push({ ...reading, range: rangeOf(node) });
  }

  private note(node: SyntaxNode, message: string): void {
    if (this.notes.length < 50 && !this.notes.some((n) => n.message === message)) this.notes.push({ severity: 'warning', message, range: rangeOf(node) });
  }
}

function isScalar(value: PyValue): value is number | string | boolean | null {
  return value === null || typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean';
}

function plain(value: PyValue): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number' || typeof value === 'string') return String(value);
  if (isList(value)) return value.every(isScalar) ? `[${value.map(plain).join(', ')}]` : `[${value.length} items]`;
  return kindOf(value) ?? 'value';
}
