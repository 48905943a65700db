// The calls that read a script's configuration: environment variables, files and their loaders (config/configSources.ts records what is read).
import { stringValue, type SyntaxNode } from '../../parsing/syntax';
import type { Evaluator } from './evaluator';
import { isList, isUnresolvedValue, kindOf, unresolved, type DictValue, type InstanceValue, type PyValue, type Scope } from './pyValues';

const YAML_LOADERS = new Set(['yaml.safe_load', 'yaml.load', 'yaml.full_load', 'yaml.unsafe_load', 'ruamel.yaml.safe_load']);
const JSON_LOADERS = new Set(['json.load', 'json.loads']);
const TOML_LOADERS = new Set(['tomllib.load', 'tomllib.loads', 'tomli.load', 'tomli.loads', 'toml.load', 'toml.loads']);
const PATHS = new Set(['pathlib.Path', 'pathlib.PurePath', 'pathlib.PosixPath']);

/** A library call that reads configuration, answered; undefined for any other call (or when the analysis reads no configuration). */
export function configCall(interp: Evaluator, name: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode): PyValue | undefined {
  const config = interp.config;
  if (!config) return undefined;
  if (name === 'os.environ.get' || name === 'os.getenv' || name === 'os.environ.setdefault') return config.environ(args[0] ?? kwargs.get('key') ?? null, args[1] ?? kwargs.get('default'), node);
  if (name === 'builtins.open' || name === 'io.open') return config.open(args[0] ?? kwargs.get('file') ?? null, 'TextIOWrapper');
  if (PATHS.has(name)) {
    const parts = args.filter((a): a is string => typeof a === 'string');
    return config.open(parts.length === args.length && parts.length > 0 ? parts.join('/') : unresolved(node.text, 'path'), 'Path');
  }
  const source = args[0] ?? kwargs.get('stream') ?? kwargs.get('fp') ?? kwargs.get('s') ?? kwargs.get('f') ?? null;
  if (YAML_LOADERS.has(name)) return config.load(source, 'yaml', node);
  if (JSON_LOADERS.has(name)) return config.load(source, 'json', node);
  // toml.load also takes a path.
  if (TOML_LOADERS.has(name)) return config.load(source, typeof source === 'string' && name === 'toml.load' ? 'by-name' : 'toml', node);
  if (name === 'omegaconf.OmegaConf.load') {
    const loaded = config.load(source, 'by-name', node);
    config.resolveInterpolations(loaded);
    return loaded;
  }
  // A DictConfig as plain containers: the same values.
  // `OmegaConf.merge(base, OmegaConf.from_cli())`: later configurations win, key by key.
  if (name === 'omegaconf.OmegaConf.merge' || name === 'omegaconf.OmegaConf.unsafe_merge') return config.merged(args, node);
  if (name === 'omegaconf.OmegaConf.from_cli' || name === 'omegaconf.OmegaConf.from_dotlist') {
    const words = args[0] ?? kwargs.get('args_list') ?? kwargs.get('dotlist');
    return config.fromDotlist(isList(words) ? words : name.endsWith('from_cli') ? [...config.scriptArguments] : []);
  }
  if (name === 'omegaconf.OmegaConf.create') return kindOf(args[0]) === 'dict' ? args[0]! : args.length === 0 ? { kind: 'dict', entries: new Map() } : undefined;
  if (name === 'omegaconf.OmegaConf.to_container' || name === 'omegaconf.OmegaConf.to_object') return kindOf(args[0]) === 'dict' ? args[0]! : undefined;
  if (name === 'builtins.vars') {
    // `vars(args)`: a namespace's attributes as a dict (dict-driven calls: `Model(**vars(args))`).
    const object = args[0];
    return kindOf(object) === 'instance' ? { kind: 'dict', entries: new Map((object as InstanceValue).attrs) } : unresolved(node.text, 'vars() of an unknown value');
  }
  return undefined;
}

/** `f.read()`, `path.read_text()`, `path.open()` on a handle `open()` or `Path()` made; undefined for any other method. */
export function configMethod(interp: Evaluator, self: PyValue, method: string, node: SyntaxNode): PyValue | undefined {
  const config = interp.config;
  if (!config?.isHandle(self)) return undefined;
  if (method === 'read' || method === 'read_text') return config.readText(self, node);
  if (method === 'open' || method === '__enter__' || method === 'resolve' || method === 'absolute' || method === 'expanduser') return self;
  if (method === 'exists' || method === 'is_file') return unresolved(node.text, 'whether a file exists is not decided statically');
  return unresolved(node.text, `\`.${method}()\` of a file is not followed`);
}

/** `sys.argv` (or `argv` imported from sys): the command line the script is run with; any other value unchanged. */
export function commandLineValue(interp: Evaluator, value: PyValue): PyValue {
  if (!interp.config || kindOf(value) !== 'external' || (value as { name: string }).name !== 'sys.argv' || (value as { self?: PyValue }).self !== undefined) return value;
  const file = interp.place?.file ?? 'train.py';
  return interp.config.commandLine(file.slice(file.lastIndexOf('/') + 1));
}

/** `os.environ["NAME"]`: an environment variable without a default. */
export function environSubscript(interp: Evaluator, container: PyValue, key: PyValue, node: SyntaxNode): PyValue | undefined {
  if (!interp.config || kindOf(container) !== 'external' || (container as { name: string }).name !== 'os.environ' || (container as { self?: PyValue }).self !== undefined) return undefined;
  return interp.config.environ(key, undefined, node);
}

/** `cfg["lr"]`, `cfg.get("lr")`, `cfg.model` (OmegaConf): records the read when the dict came from a configuration file. */
export function readConfigKey(interp: Evaluator, dict: PyValue, key: string, node: SyntaxNode): void {
  if (kindOf(dict) === 'dict') interp.config?.readKey(dict, key, (dict as DictValue).entries.get(key), node);
}

/**
 * `ntokens = len(corpus.dictionary)`, `n_classes = dataset.num_classes`: a value the data decides,
 * unknown to a static reading. With a configuration reader, it becomes a named assumption.
 */
export function dataDerivedValue(interp: Evaluator, name: string, value: PyValue, right: SyntaxNode, node: SyntaxNode): PyValue {
  if (!interp.config || !interp.scriptLevel || interp.forwardMode || !isUnresolvedValue(value)) return value;
  const fn = right.type === 'call' ? right.childForFieldName('function')?.text : undefined;
  const attribute = right.type === 'attribute' ? right.childForFieldName('attribute')?.text : undefined;
  const fromData = fn === 'len' || (attribute !== undefined && /^(vocab_size|n_vocab|num_tokens|ntokens|num_classes|n_classes|num_labels|nclasses)$/.test(attribute));
  if (!fromData) return value;
  return interp.config.dataDerived(name, right, node) ?? value;
}

/**
 * `@hydra.main(config_path="conf", config_name="config")` on a function: the composed
 * configuration it is called with, as its one argument; no arguments for any other function.
 */
export function hydraArguments(interp: Evaluator, definition: SyntaxNode): PyValue[] {
  const config = interp.config;
  const decorated = definition.parent?.type === 'decorated_definition' ? definition.parent : undefined;
  if (!config || !decorated) return [];
  for (const decorator of decorated.namedChildren.filter((c) => c.type === 'decorator')) {
    const call = decorator.namedChildren[0];
    const callee = call?.type === 'call' ? call.childForFieldName('function')?.text : undefined;
    if (!callee || interp.imports.qualify(callee) !== 'hydra.main') continue;
    const keyword = (name: string): string | undefined => {
      const argument = call!.childForFieldName('arguments')?.namedChildren.find((a) => a.type === 'keyword_argument' && a.childForFieldName('name')?.text === name);
      const value = argument?.childForFieldName('value');
      return value?.type === 'string' ? stringValue(value) : undefined;
    };
    const name = keyword('config_name');
    if (name === undefined) {
      interp.note(call, `${call!.text.slice(0, 60)}: no config_name the analysis can read; the configuration Hydra passes is unknown (set values with --set)`);
      return [];
    }
    return [config.hydraConfig(keyword('config_path') ?? '.', name, call!)];
  }
  return [];
}

/** `exec(text)` of a project file's text in `scope`; false when the text is not one (the call is then followed as any other). */
export function execConfiguration(interp: Evaluator, node: SyntaxNode, scope: Scope): boolean {
  const argument = node.childForFieldName('arguments')?.namedChildren.find((a) => a.type !== 'comment');
  if (!interp.config || !argument || argument.type === 'keyword_argument') return false;
  const source = interp.config.execSource(interp.evaluate(argument, scope), node);
  if (!source) return false;
  interp.execBlock(source.root, scope);
  interp.config.afterExec(source.file, source.root, (name, value) => scope.set(name, value), (name) => scope.get(name));
  return true;
}
