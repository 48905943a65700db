/**
 * Lightning's `LightningCLI(Model, DataModule)`: the script builds nothing itself; the CLI builds
 * the model, the data module and the Trainer from the configuration it is run with
 * (`python main.py fit --config configs/cifar.yaml --data.batch_size 64`), then fits. Followed as
 * the equivalent script:
 *
 *     model = Model(**cfg["model"])            # or the class `class_path` names, with `init_args`
 *     datamodule = DataModule(**cfg["data"])
 *     trainer = Trainer(**{**trainer_defaults, **cfg["trainer"]})
 *     trainer.fit(model, datamodule)           # unless run=False: the script then fits itself
 *
 * where `cfg` is composed as jsonargparse composes it: `parser_kwargs`' default_config_files, then
 * each `--config` file in order, then the `--section.key value` options, later ones winning. A
 * class's own defaults stand for what the configuration does not set. The model is bound to the
 * name `model`, LightningCLI's `cli.model`.
 */
import type { SyntaxNode } from '../../parsing/syntax';
import { assumedValueOf } from '../config/assumedValues';
import type { Evaluator } from './evaluator';
import { locateDottedPath } from './hydraInstantiate';
import { classAttribute } from './classes';
import { CLI_PARSER } from './frameworkObjects';
import { asModule, isList, isUnresolvedValue, kindOf, unresolved, type ClassValue, type DictValue, type FunctionValue, type InstanceValue, type PyValue } from './pyValues';

const LIGHTNING_CLI = /^(lightning\.pytorch|pytorch_lightning)(\.utilities)?\.cli\.LightningCLI$/;
const SUBCOMMANDS = new Set(['fit', 'validate', 'test', 'predict']);
/** The sections LightningCLI builds objects from, the attribute of the CLI each becomes, and where its class is given (position or keyword). */
const SECTIONS = [
  // The data module first: a link `apply_on="instantiate"` gives the model one of its attributes.
  { key: 'data', attribute: 'datamodule', position: 1, keyword: 'datamodule_class' },
  { key: 'model', attribute: 'model', position: 0, keyword: 'model_class' },
] as const;
/** Options whose value is the class of their section. */
const CLASS_OPTIONS = new Set(['model', 'data', 'optimizer', 'lr_scheduler']);
/** More configuration files than a command line names by hand. */
const MAX_CONFIG_FILES = 8;

type CallValue = (callee: PyValue, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode) => PyValue;

export function isLightningCli(qualified: string): boolean {
  // Asked of every library call and base class: the cheap test first.
  return qualified.endsWith('.LightningCLI') && LIGHTNING_CLI.test(qualified);
}

/** `LightningCLI(...)`: the CLI object (`cli.model`, `cli.datamodule`, `cli.trainer`), its model and data module built and fitted. */
export function lightningCli(interp: Evaluator, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode, callValue: CallValue, subclass?: ClassValue): PyValue {
  const config = interp.config;
  if (!config) return unresolved(node.text, 'LightningCLI without a configuration reader');
  const given = kwargs.get('args');
  const argv = isList(given) && given.every((word) => typeof word === 'string') ? given : given === undefined || given === null ? [...config.scriptArguments] : [];
  const command = commandLine(argv);
  // `args={...}`: the configuration itself, in place of the command line.
  const composed: DictValue = { kind: 'dict', entries: new Map<string, PyValue>(kindOf(given) === 'dict' ? (given as DictValue).entries : []) };
  // Lowest first: default_config_files, then --config files in order; a later file's keys win.
  const named = [...defaultConfigFiles(kwargs.get('parser_kwargs'), command.subcommand), ...command.configs];
  const files = named.slice(0, MAX_CONFIG_FILES);
  if (named.length > MAX_CONFIG_FILES) interp.note(node, `LightningCLI: only the first ${MAX_CONFIG_FILES} configuration files are read`);
  for (const file of files.reverse()) {
    const loaded = config.load(file, 'by-name', node);
    if (kindOf(loaded) !== 'dict') continue;
    // A file given before the subcommand holds the subcommand's settings under its name (`fit: {model: ...}`).
    const own = command.subcommand ? (loaded as DictValue).entries.get(command.subcommand) : undefined;
    config.underlay(composed, kindOf(own) === 'dict' ? own! : loaded);
  }
  for (const [path, value] of command.options) setPath(interp, composed, path, value);
  if (argv.length === 0 && files.length === 0) {
    interp.note(node, 'LightningCLI is run without arguments here: the classes\' own defaults are used (give the command line after -- on the CLI, e.g. -- fit --config configs/x.yaml, or set values with --set)');
  }

  const cli: InstanceValue = { kind: 'instance', className: 'LightningCLI', attrs: new Map(), ...(subclass ? { classValue: subclass } : {}) };
  const links = subclass ? parserAdditions(interp, subclass, cli, composed, node, callValue) : [];
  for (const { key, attribute, position, keyword } of SECTIONS) {
    const section = sectionOf(interp, composed, key, node);
    // `link_arguments("data.num_classes", "model.num_classes", apply_on="instantiate")`: the built data module's attribute.
    const linked = new Map<string, PyValue>();
    for (const [source, target] of links) {
      const [from, ...path] = source.split('.');
      const [to, ...into] = target.split('.');
      const holder = cli.attrs.get(from === 'data' ? 'datamodule' : (from ?? ''));
      const value = path.length === 1 ? (asModule(holder)?.attrs.get(path[0]!) ?? (kindOf(holder) === 'instance' ? (holder as InstanceValue).attrs.get(path[0]!) : undefined)) : undefined;
      const name = into[0] === 'init_args' ? into[1] : into[0];
      if (to === key && name !== undefined && value !== undefined) linked.set(name, value);
    }
    const built = build(interp, args[position] ?? kwargs.get(keyword), section, key, node, callValue, linked);
    cli.attrs.set(attribute, built);
  }
  const trainerSection = sectionOf(interp, composed, 'trainer', node);
  const trainerKwargs = new Map<string, PyValue>();
  const defaults = kwargs.get('trainer_defaults');
  if (kindOf(defaults) === 'dict') for (const [k, v] of (defaults as DictValue).entries) trainerKwargs.set(k, v);
  for (const k of trainerSection?.entries.keys() ?? []) trainerKwargs.set(k, read(interp, trainerSection!, k, node));
  const trainer = callValue({ kind: 'external', name: 'lightning.pytorch.Trainer' }, [], trainerKwargs, node);
  cli.attrs.set('trainer', trainer);
  const model = cli.attrs.get('model')!;
  configuredOptimizer(interp, composed, model, node, callValue);
  if (interp.depth === 0 && interp.scriptLevel) interp.hooks.onAssign?.('model', model, node);
  const run = kwargs.get('run');
  if (run !== false && !isUnresolvedValue(model)) {
    const datamodule = cli.attrs.get('datamodule');
    const fitArgs = datamodule !== undefined && !isUnresolvedValue(datamodule) && datamodule !== null ? [model, datamodule] : [model];
    callValue({ kind: 'external', name: 'lightning.pytorch.Trainer.fit', self: trainer }, fitArgs, new Map(), node);
  }
  return cli;
}

/**
 * A subclass's `add_arguments_to_parser(parser)`, run on a parser that records what it asks:
 * `set_defaults` fill keys the configuration leaves unset, links applied on parse copy a value
 * now; the links applied on instantiate are returned (source and target paths), for build time.
 */
function parserAdditions(interp: Evaluator, subclass: ClassValue, cli: InstanceValue, composed: DictValue, node: SyntaxNode, callValue: CallValue): [string, string][] {
  const hook = classAttribute(subclass, 'add_arguments_to_parser');
  if (kindOf(hook) !== 'function') return [];
  const parser: InstanceValue = { kind: 'instance', className: CLI_PARSER, attrs: new Map<string, PyValue>([['links', []], ['defaults', { kind: 'dict', entries: new Map() }]]) };
  callValue({ ...(hook as FunctionValue), self: cli }, [parser], new Map(), node);
  const defaults = parser.attrs.get('defaults') as DictValue;
  for (const [path, value] of defaults.entries) if (valueAt(composed, path.split('.')) === undefined) setPath(interp, composed, path.split('.'), value);
  const onInstantiate: [string, string][] = [];
  for (const link of parser.attrs.get('links') as PyValue[]) {
    const [source, target, on] = link as [string, string, PyValue];
    if (on === 'instantiate') onInstantiate.push([source, target]);
    else {
      const value = valueAt(composed, source.split('.'));
      if (value !== undefined) setPath(interp, composed, target.split('.'), value);
    }
  }
  return onInstantiate;
}

function valueAt(root: DictValue, path: readonly string[]): PyValue | undefined {
  let value: PyValue | undefined = root;
  for (const key of path) value = kindOf(value) === 'dict' ? (value as DictValue).entries.get(key) : undefined;
  return value;
}

interface CommandLine {
  readonly subcommand?: string;
  readonly configs: string[];
  /** `--data.batch_size 64`, `--trainer.precision=bf16-mixed`: dotted path and value. */
  readonly options: [string[], PyValue][];
}

/** The words LightningCLI parses: the subcommand, `--config`/`-c` files and `--section.key value` options. */
function commandLine(argv: readonly string[]): CommandLine {
  const result: { subcommand?: string; configs: string[]; options: [string[], PyValue][] } = { configs: [], options: [] };
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (!word.startsWith('-')) {
      if (result.subcommand === undefined && SUBCOMMANDS.has(word)) result.subcommand = word;
      continue;
    }
    const equals = word.indexOf('=');
    const flag = equals >= 0 ? word.slice(0, equals) : word;
    const next = argv[i + 1];
    const takesNext = equals < 0 && next !== undefined && !next.startsWith('--');
    const value = equals >= 0 ? word.slice(equals + 1) : takesNext ? next : undefined;
    if (takesNext) i += 1;
    if (value === undefined) continue;
    if (flag === '--config' || flag === '-c') result.configs.push(value);
    else if (/^--[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+$/.test(flag)) result.options.push([flag.slice(2).split('.'), assumedValueOf(value)]);
    // `--optimizer AdamW`, `--model project.models.Net`: the section's class.
    else if (CLASS_OPTIONS.has(flag.slice(2))) result.options.push([[flag.slice(2), 'class_path'], value]);
  }
  return result;
}

/** `parser_kwargs={"default_config_files": [...]}`, or per subcommand (`{"fit": {"default_config_files": [...]}}`). */
function defaultConfigFiles(parserKwargs: PyValue | undefined, subcommand: string | undefined): string[] {
  if (kindOf(parserKwargs) !== 'dict') return [];
  const entries = (parserKwargs as DictValue).entries;
  const own = subcommand ? entries.get(subcommand) : undefined;
  const files = (kindOf(own) === 'dict' ? (own as DictValue).entries.get('default_config_files') : undefined) ?? entries.get('default_config_files');
  return isList(files) ? files.filter((file): file is string => typeof file === 'string') : [];
}

/** `--model.init_args.latent_dim 512`: the value set at that path, mappings made on the way. */
function setPath(interp: Evaluator, root: DictValue, path: readonly string[], value: PyValue): void {
  let dict = root;
  for (const key of path.slice(0, -1)) {
    let next = dict.entries.get(key);
    if (kindOf(next) !== 'dict') {
      next = { kind: 'dict', entries: new Map() };
      dict.entries.set(key, next);
    }
    dict = next as DictValue;
  }
  const last = path[path.length - 1]!;
  dict.entries.set(last, value);
  // Set on the command line: no longer the file's value.
  interp.config?.overwritten(dict, last);
}

function sectionOf(interp: Evaluator, composed: DictValue, key: string, node: SyntaxNode): DictValue | undefined {
  const section = composed.entries.has(key) ? read(interp, composed, key, node) : undefined;
  return kindOf(section) === 'dict' ? (section as DictValue) : undefined;
}

function read(interp: Evaluator, dict: DictValue, key: string, node: SyntaxNode): PyValue {
  interp.config?.readKey(dict, key, dict.entries.get(key), node);
  return dict.entries.get(key)!;
}

/**
 * The section's object: the class `class_path` names with `init_args` (subclass mode, or any
 * section that names its class), else the class given to LightningCLI with the section's keys.
 */
function build(interp: Evaluator, given: PyValue | undefined, section: DictValue | undefined, key: string, node: SyntaxNode, callValue: CallValue, linked: ReadonlyMap<string, PyValue>): PyValue {
  const classPath = section?.entries.has('class_path') ? read(interp, section, 'class_path', node) : undefined;
  let callee = given ?? null;
  let settings = section;
  if (classPath !== undefined) {
    callee = typeof classPath === 'string' ? locateClass(interp, classPath, node) : unresolved(node.text, `LightningCLI ${key}.class_path`);
    const initArgs = read(interp, section!, 'init_args', node);
    settings = kindOf(initArgs) === 'dict' ? (initArgs as DictValue) : undefined;
  }
  if (given === undefined && classPath === undefined) {
    if (key === 'model') interp.note(node, 'LightningCLI is given no model class and its configuration names none (model.class_path); the model is unknown');
    return null;
  }
  if (isUnresolvedValue(callee) || callee === null) {
    interp.note(node, `LightningCLI's ${key} class is not one the analysis can follow`);
    return unresolved(node.text, `LightningCLI ${key}`);
  }
  return callValue(callee, [], new Map([...sectionArguments(interp, settings, section, node), ...linked]), node);
}

/** The arguments a section gives its class: `init_args`, with keys set beside `class_path` (`--optimizer.lr 0.01`) over them. */
function sectionArguments(interp: Evaluator, initArgs: DictValue | undefined, section: DictValue | undefined, node: SyntaxNode): Map<string, PyValue> {
  const kwargs = new Map<string, PyValue>();
  for (const dict of new Set([initArgs, section])) {
    for (const name of dict?.entries.keys() ?? []) {
      if (name === 'class_path' || name === 'init_args' || name === 'dict_kwargs') continue;
      kwargs.set(name, read(interp, dict!, name, node));
    }
  }
  return kwargs;
}

/**
 * The `optimizer:` section (`class_path: torch.optim.AdamW` with `init_args`, or just `AdamW`):
 * LightningCLI makes the model's optimizer from it when the model has no configure_optimizers()
 * of its own (one it has wins, as LightningCLI warns).
 */
function configuredOptimizer(interp: Evaluator, composed: DictValue, model: PyValue, node: SyntaxNode, callValue: CallValue): void {
  const module = asModule(model);
  if (!module || !composed.entries.has('optimizer')) return;
  if (module.classValue && classAttribute(module.classValue, 'configure_optimizers') !== undefined) return;
  const section = read(interp, composed, 'optimizer', node);
  const named = typeof section === 'string' ? section : kindOf(section) === 'dict' && (section as DictValue).entries.has('class_path') ? read(interp, section as DictValue, 'class_path', node) : undefined;
  if (typeof named !== 'string') return;
  const optimizer = named.includes('.') ? locateDottedPath(interp, named, node) : { kind: 'external' as const, name: `torch.optim.${named}` };
  const dict = kindOf(section) === 'dict' ? (section as DictValue) : undefined;
  const initArgs = dict?.entries.get('init_args');
  const kwargs = sectionArguments(interp, kindOf(initArgs) === 'dict' ? (initArgs as DictValue) : undefined, dict, node);
  kwargs.delete('params');
  const parameters = callValue({ kind: 'external', name: 'method.parameters', self: model }, [], new Map(), node);
  callValue(optimizer, [parameters], kwargs, node);
}

/** `project.models.Net`, or a bare class name the script imports (`Net`), as jsonargparse accepts both. */
function locateClass(interp: Evaluator, classPath: string, node: SyntaxNode): PyValue {
  if (classPath.includes('.')) return locateDottedPath(interp, classPath, node);
  const qualified = interp.imports.resolve(classPath);
  return qualified ? locateDottedPath(interp, qualified, node) : unresolved(node.text, `class_path ${classPath} is not imported by the script`);
}
