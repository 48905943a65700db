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
import { assumedValueOf, type AssumedValue } from './assumedValues';
import { resolveInterpolations } from './interpolations';
import { HYDRA_DEFAULT, hydraOverrides, selectionGroup, withSelection } from './hydraOverrides';

// Defined with the checks of assumed values; exported here too, where the readers of configuration find it.
export type { AssumedValue } from './assumedValues';

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
/** How deeply Hydra files may name further files in their own defaults lists. */
const MAX_HYDRA_NESTING = 6;
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
   * is `<config_path>/<group>/<option>.yaml` under the key `group` (or the package `group@pkg`
   * names; `_global_` for the top), the group file's own defaults list first, and the primary
   * file's own keys override them (`_self_` last, Hydra 1.1's default). `group: null` selects
   * nothing; `optional group: option` may be missing; `override` is read as a plain selection.
   */
  hydraConfig(configPath: string, configName: string, node: SyntaxNode, overrides: readonly string[] = this.scriptArguments): PyValue {
    const dir = configPath.replace(/\/+$/, '') || '.';
    const primary = this.load(`${dir}/${configName.endsWith('.yaml') ? configName : `${configName}.yaml`}`, 'by-name', node);
    if (kindOf(primary) !== 'dict') return primary;
    // `model=large` selects a group's option when the defaults list has that group (or `+group=option` adds one); any other `key=value` sets a value.
    const listed = (primary as DictValue).entries.get('defaults');
    const groups = new Set(isList(listed) ? listed.map(selectionGroup) : []);
    const selected = new Map<string, string | null>();
    const values: [string, PyValue | undefined][] = [];
    for (const { sign, key, text } of hydraOverrides(overrides)) {
      if (text !== undefined && !key.includes('.') && (groups.has(key) || (sign.startsWith('+') && this.exists(`${dir}/${key}/${text}.yaml`)))) selected.set(key, text === 'null' ? null : text);
      else if (sign === '~') values.push([key, undefined]);
      else if (text !== undefined) values.push([key, assumedValueOf(text)]);
    }
    const composed = this.composeDefaults(primary as DictValue, dir, '', node, 0, selected);
    for (const [path, value] of values) {
      // `trainer.max_epochs=5`: set after composition, as Hydra applies command-line overrides last.
      const keys = path.split('.');
      const parent = keys.slice(0, -1).reduce<DictValue | undefined>((dict, key) => {
        if (!dict) return undefined;
        if (kindOf(dict.entries.get(key)) !== 'dict') dict.entries.set(key, { kind: 'dict', entries: new Map() });
        return dict.entries.get(key) as DictValue;
      }, composed);
      if (!parent) continue;
      if (value === undefined) parent.entries.delete(keys[keys.length - 1]!);
      else parent.entries.set(keys[keys.length - 1]!, value);
      this.overwritten(parent, keys[keys.length - 1]!);
    }
    this.resolveInterpolations(composed);
    return composed;
  }

  /** The folder Hydra's `initialize(config_path=...)` set, for `compose()` after it. */
  hydraConfigPath?: string;

  /** OmegaConf's `${...}` interpolations, resolved in place (interpolations.ts). */
  resolveInterpolations(root: PyValue): void {
    resolveInterpolations(root);
  }

  /** A loaded Hydra file with the files its defaults list names merged under its own keys; `group` is the file's own group folder ('' at the top). */
  private composeDefaults(composed: DictValue, dir: string, group: string, node: SyntaxNode, depth: number, selected: ReadonlyMap<string, string | null> = new Map()): DictValue {
    const listed = composed.entries.get('defaults');
    composed.entries.delete('defaults');
    // Command-line selections (`experiment=fast`, `+experiment=fast`): in place of the listed option, or added.
    const defaults: PyValue[] = isList(listed) ? listed.map((item) => withSelection(item, selected)) : [];
    for (const [name, option] of selected) if (!defaults.some((item) => selectionGroup(item) === name)) defaults.push({ kind: 'dict', entries: new Map([[name, option]]) });
    if (defaults.length === 0) return composed;
    if (depth >= MAX_HYDRA_NESTING) {
      this.note(node, `Hydra defaults lists nest deeper than ${MAX_HYDRA_NESTING} files; the inner ones are not read.`);
      return composed;
    }
    // Entries after `_self_` override the file's own keys; before it (or without it) they lie under them.
    const selfAt = defaults.indexOf('_self_');
    for (const [i, item] of defaults.entries()) {
      if (item === '_self_') continue;
      const merge = (into: DictValue, loaded: PyValue) => (selfAt >= 0 && i > selfAt ? this.overlay(into, loaded) : this.underlay(into, loaded));
      if (typeof item === 'string') {
        // Another config of the same group folder (`- default` in trainer/gpu.yaml), merged at the file's top.
        const path = item.startsWith('/') ? `${dir}/${item.slice(1)}` : `${dir}/${group ? `${group}/` : ''}${item}`;
        const loaded = this.load(`${path}.yaml`, 'by-name', node);
        if (kindOf(loaded) === 'dict') merge(composed, this.composeDefaults(loaded as DictValue, dir, dirnameOf(path.slice(dir.length + 1)).replace(/^\.$/, ''), node, depth + 1));
        continue;
      }
      const entry = kindOf(item) === 'dict' ? [...(item as DictValue).entries][0] : undefined;
      const written = entry?.[0].trim();
      const selection = HYDRA_DEFAULT.exec(written ?? '');
      if (!entry || !selection || (typeof entry[1] !== 'string' && entry[1] !== null)) {
        this.note(node, `Hydra defaults entry ${plain(item)} is not read (only \`group: option\`, \`optional\`/\`override group: option\`, \`group@package: option\` and \`_self_\` are); its values are missing from the configuration.`);
        continue;
      }
      // `experiment: null`: nothing selected (the usual default of an optional group).
      if (entry[1] === null) continue;
      const [, optional, path, pkg] = selection;
      const groupPath = path!.startsWith('/') ? path!.slice(1) : group ? `${group}/${path}` : path!;
      const file = `${dir}/${groupPath}/${entry[1]}.yaml`;
      if (optional && !this.exists(file)) continue;
      const key = pkg === '_global_' ? '' : (pkg ?? groupPath.split('/').pop()!);
      const loaded = this.load(file, 'by-name', node, key);
      if (kindOf(loaded) !== 'dict') continue;
      const inner = this.composeDefaults(loaded as DictValue, dir, groupPath, node, depth + 1);
      // `# @package _global_` (experiment files): the file's keys are the configuration's own.
      const global = key === '' || /^#\s*@package\s+_global_/m.test(this.textOf(file) ?? '');
      // `group@model.encoder`: the package is a dotted path.
      const parts = key.split('.');
      const parent = global ? composed : parts.slice(0, -1).reduce<DictValue>((dict, part) => {
        if (kindOf(dict.entries.get(part)) !== 'dict') dict.entries.set(part, { kind: 'dict', entries: new Map() });
        return dict.entries.get(part) as DictValue;
      }, composed);
      const last = parts[parts.length - 1]!;
      const own = global ? composed : parent.entries.get(last);
      if (kindOf(own) === 'dict') merge(own as DictValue, inner);
      else if (own === undefined || (selfAt >= 0 && i > selfAt)) parent.entries.set(last, inner);
    }
    return composed;
  }

  /** Whether a file of the project exists (read through the project's reader, so a change re-estimates). */
  private exists(path: string): boolean {
    return this.textOf(path) !== undefined;
  }

  private textOf(path: string): string | undefined {
    const files = this.files;
    if (!files) return undefined;
    for (const candidate of [joinPath(files.scriptDir, path), joinPath(files.root, path)]) {
      if (!isInside(candidate, files.root)) continue;
      const text = files.read(candidate);
      if (text !== undefined) return text;
    }
    return undefined;
  }

  /** `OmegaConf.merge(a, b, ...)`: a new configuration, each one's keys over the ones before (nested mappings merge), each key keeping its origin. */
  merged(configs: readonly PyValue[], node: SyntaxNode): PyValue {
    const result: DictValue = { kind: 'dict', entries: new Map() };
    this.origins.set(result, { prefix: '', keys: new Map(), assumed: new Set() });
    for (const config of configs) {
      if (kindOf(config) === 'dict') this.overlay(result, config);
      else if (isUnresolvedValue(config)) this.note(node, `${node.text.slice(0, 60)}: a configuration merged here is unknown; its keys are missing`);
    }
    this.resolveInterpolations(result);
    return result;
  }

  /** `OmegaConf.from_cli()`, `OmegaConf.from_dotlist(["model.n_layer=4"])`: the `key.path=value` words as a configuration. */
  fromDotlist(words: readonly PyValue[]): DictValue {
    const result: DictValue = { kind: 'dict', entries: new Map() };
    for (const word of words.slice(0, MAX_READINGS)) {
      const match = typeof word === 'string' ? /^([A-Za-z_][\w]*(?:\.[\w]+)*)=(.*)$/.exec(word) : null;
      if (!match) continue;
      const keys = match[1]!.split('.');
      let dict = result;
      for (const key of keys.slice(0, -1)) {
        if (kindOf(dict.entries.get(key)) !== 'dict') dict.entries.set(key, { kind: 'dict', entries: new Map() });
        dict = dict.entries.get(key) as DictValue;
      }
      dict.entries.set(keys[keys.length - 1]!, assumedValueOf(match[2]!));
    }
    return result;
  }

  /** Puts `above`'s keys over `dict`'s, with their origins: a key both have takes `above`'s value (nested mappings merge). */
  private overlay(dict: DictValue, above: PyValue): void {
    if (kindOf(above) !== 'dict') return;
    const origin = this.origins.get(dict);
    const aboveOrigin = this.origins.get(above as DictValue);
    for (const [key, value] of (above as DictValue).entries) {
      const own = dict.entries.get(key);
      if (kindOf(own) === 'dict' && kindOf(value) === 'dict') {
        this.overlay(own as DictValue, value);
        continue;
      }
      dict.entries.set(key, value);
      const place = aboveOrigin?.keys.get(key);
      if (origin && place) origin.keys.set(key, place);
      else origin?.keys.delete(key);
      if (aboveOrigin?.assumed.has(key)) origin?.assumed.add(key);
      else origin?.assumed.delete(key);
    }
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

  /** `dict(cfg)`, `cfg.copy()`: the copy's keys still come from the file, and reads of them say so. */
  copied(from: PyValue, to: DictValue): void {
    const origin = typeof from === 'object' && from !== null ? this.origins.get(from) : undefined;
    if (origin) this.origins.set(to, { prefix: origin.prefix, keys: new Map(origin.keys), assumed: new Set(origin.assumed) });
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

  /** `--batch-size 64` on the command line the script is run with: argparse's value in place of the default, recorded as such. */
  commandLineValue(name: string, value: PyValue, node: SyntaxNode): void {
    if (isScalar(value) || (isList(value) && value.length <= 16 && value.every(isScalar))) this.read({ key: name, value: plain(value), origin: `the command line (--${name.replace(/_/g, '-')})` }, node);
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

  /**
   * `tokenizer.vocab_size`, `len(tokenizer)` of a `from_pretrained` tokenizer: the user's value,
   * else the checkpoint's vocabulary where it is known, else the data-derived assumption.
   */
  tokenizerVocabulary(known: { checkpoint: string; size: number } | undefined, node: SyntaxNode): PyValue {
    const assumed = this.assumed(DATA_DERIVED_DEFAULTS['vocabulary size'].setting);
    if (!known || (typeof assumed === 'number' && Number.isInteger(assumed) && assumed > 0)) {
      return this.dataDerived(DATA_DERIVED_DEFAULTS['vocabulary size'].setting, node, node) ?? unresolved(node.text, 'vocabulary size');
    }
    this.read({ key: 'vocab_size', value: String(known.size), origin: `the vocabulary of ${known.checkpoint} (${node.text.slice(0, 40)}): vocab_size of its config.json` }, node);
    return known.size;
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
