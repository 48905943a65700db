import { readConfigText, isConfigMap, formatOfPath, type ConfigNode } from './config/configText';
import type { CallEvent } from './interpreter/interpreter';
import { isList, kindOf, mappingOf, type ExternalValue, type InstanceValue, type PyValue } from './interpreter/pyValues';
import type { DistributedSetup, Found, Precision } from './modelDescription';
import { argumentNode, HF_ARGUMENTS, LIGHTNING, simpleName } from './callArguments';

/**
 * How a training job is spread over several GPUs and on how many, read from what its author wrote:
 * the script (`DistributedDataParallel(...)`, `FullyShardedDataParallel(sharding_strategy=...,
 * cpu_offload=CPUOffload(offload_params=True))`, `TrainingArguments(fsdp="full_shard offload",
 * deepspeed="ds_config.json")`, Lightning's `Trainer(strategy="deepspeed_stage_3", devices=4)`,
 * accelerate's plugins, `deepspeed.initialize(config=...)`), the DeepSpeed JSON and accelerate YAML
 * it names, and the launch command in a shell script or README beside it (`torchrun
 * --nproc_per_node=8 train.py`, `accelerate launch --config_file fsdp.yaml train.py`,
 * `deepspeed --num_gpus 4 train.py --deepspeed ds.json`). Each value keeps where it was read.
 */

/** The project's files as this reader needs them: a path relative to the script's folder or the project root, and the script's file name. */
export interface LaunchFiles {
  read(relative: string): { readonly shown: string; readonly text: string } | undefined;
  readonly scriptName: string;
}

/** Files a launch command is usually kept in, beside the script or at the project root. */
const LAUNCH_FILES = ['run.sh', 'train.sh', 'launch.sh', 'finetune.sh', 'run_train.sh', 'scripts/train.sh', 'scripts/run.sh', 'scripts/finetune.sh', 'README.md'];
/** accelerate's own file names for a config kept in the project (`accelerate config --config_file ...`). */
const ACCELERATE_FILES = ['accelerate_config.yaml', 'default_config.yaml', 'fsdp_config.yaml', 'deepspeed_config.yaml', 'configs/accelerate_config.yaml', 'configs/fsdp_config.yaml', 'configs/deepspeed_config.yaml'];
const MAX_LAUNCH_CHARS = 64 * 1024;

const LIGHTNING_STRATEGY = /^(lightning|pytorch_lightning|lightning\.pytorch|lightning\.fabric)(\.\w+)*\.(DeepSpeedStrategy|FSDPStrategy|DDPStrategy)$/;
const DDP = /^torch\.nn\.parallel(\.distributed)?\.DistributedDataParallel$/;
const FSDP = /^torch\.distributed\.fsdp(\.fully_sharded_data_parallel)?\.FullyShardedDataParallel$/;
const FSDP2 = /^torch\.distributed(\._composable)?\.fsdp(\.\w+)*\.fully_shard$/;
const CPU_OFFLOAD = /^torch\.distributed\.fsdp(\.\w+)*\.CPUOffload$/;
const ACCELERATE_PLUGIN = /^accelerate(\.\w+)*\.(DeepSpeedPlugin|FullyShardedDataParallelPlugin)$/;
const ACCELERATOR = /^accelerate(\.accelerator)?\.Accelerator$/;
const DEEPSPEED_INITIALIZE = /^deepspeed\.initialize$/;
const MULTI_GPU_LIBRARIES = /^(transformers|peft|trl|accelerate|deepspeed|lightning|pytorch_lightning|torch\.distributed|torch\.nn\.parallel)\./;

/** The name a strategy enum or string is written with: `ShardingStrategy.SHARD_GRAD_OP`, `"shard_grad_op"`. */
function enumName(value: PyValue | undefined): string {
  const name = kindOf(value) === 'external' ? (value as ExternalValue).name : typeof value === 'string' ? value : kindOf(value) === 'instance' ? (value as InstanceValue).className : '';
  return simpleName(name).toUpperCase();
}

/** FSDP's ShardingStrategy by name (or accelerate's 1-5 numbering) as what it partitions. */
function fsdpStrategy(name: string): Pick<DistributedSetup, 'stage' | 'hybrid'> {
  if (/^(SHARD_GRAD_OP|2)$/.test(name)) return { stage: 2 };
  if (/^(NO_SHARD|3)$/.test(name)) return { stage: 0 };
  if (/^(HYBRID_SHARD|4)$/.test(name)) return { stage: 3, hybrid: true };
  if (/^(_?HYBRID_SHARD_ZERO2|5)$/.test(name)) return { stage: 2, hybrid: true };
  return { stage: 3 };
}

/** Lightning's strategy names: "ddp", "fsdp", "deepspeed" (stage 2), "deepspeed_stage_3_offload"... */
function lightningStrategy(name: string): DistributedSetup | undefined {
  const text = name.toLowerCase();
  if (/^deepspeed/.test(text)) {
    const stage = Number(/stage_(\d)/.exec(text)?.[1] ?? 2) as DistributedSetup['stage'];
    const offload = /offload/.test(text);
    return { kind: 'zero', stage, offloadOptimizer: offload, offloadParams: offload && stage === 3 };
  }
  if (/^fsdp/.test(text)) return { kind: 'fsdp', stage: 3, ...(/offload/.test(text) ? { offloadOptimizer: true, offloadParams: true } : {}) };
  if (/^ddp/.test(text)) return { kind: 'ddp', stage: 0 };
  return undefined;
}

/** `TrainingArguments(fsdp="full_shard auto_wrap offload")`: the words of its option string. */
function hfFsdpWords(text: string): DistributedSetup {
  const words = text.toLowerCase().split(/\s+/);
  const strategy = words.find((w) => /shard/.test(w)) ?? 'full_shard';
  const offload = words.includes('offload');
  return { kind: 'fsdp', ...fsdpStrategy(strategy.toUpperCase()), ...(offload ? { offloadOptimizer: true, offloadParams: true } : {}) };
}

// ------------------------------------------------------------------ configuration files

type Plain = string | number | boolean | null | Plain[] | { [key: string]: Plain };

function plainOf(node: ConfigNode | undefined): Plain | undefined {
  if (!node) return undefined;
  if (isConfigMap(node.value)) return Object.fromEntries([...node.value].map(([key, child]) => [key, plainOf(child) ?? null]));
  if (Array.isArray(node.value)) return (node.value as readonly ConfigNode[]).map((child) => plainOf(child) ?? null);
  return node.value as Plain;
}

/** A dict the script builds (`ds_config = {"zero_optimization": {...}}`) as plain data. */
function plainOfValue(value: PyValue | undefined, depth = 0): Plain | undefined {
  if (depth > 8) return undefined;
  const mapping = mappingOf(value);
  if (mapping) return Object.fromEntries([...mapping.entries].map(([key, child]) => [key, plainOfValue(child, depth + 1) ?? null]));
  if (isList(value)) return value.map((child) => plainOfValue(child, depth + 1) ?? null);
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null ? value : undefined;
}

/** A string or number as text (accelerate numbers FSDP's strategies 1-5); '' for anything else. */
const scalarText = (value: Plain | undefined): string => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '');
const field = (data: Plain | undefined, key: string): Plain | undefined => (data && typeof data === 'object' && !Array.isArray(data) ? data[key] : undefined);
const offloaded = (value: Plain | undefined): boolean => {
  const device = field(value, 'device') ?? value;
  return device === true || device === 'cpu' || device === 'nvme';
};
const bucket = (value: Plain | undefined): number | 'auto' | undefined => (value === 'auto' ? 'auto' : typeof value === 'number' && value > 0 ? value : undefined);

/** A DeepSpeed config (JSON or the script's dict): `zero_optimization.stage`, `offload_optimizer.device`, `offload_param.device`, bucket sizes. */
export function deepSpeedConfig(data: Plain | undefined): DistributedSetup | undefined {
  const zero = field(data, 'zero_optimization');
  if (zero === undefined) return data && typeof data === 'object' ? { kind: 'zero', stage: 0 } : undefined;
  const stageValue = field(zero, 'stage');
  const stage = (typeof stageValue === 'number' && stageValue >= 0 && stageValue <= 3 ? stageValue : 0) as DistributedSetup['stage'];
  const reduceBucket = bucket(field(zero, 'reduce_bucket_size'));
  const prefetchBucket = bucket(field(zero, 'stage3_prefetch_bucket_size'));
  const overlap = field(zero, 'overlap_comm');
  return {
    kind: 'zero',
    stage,
    offloadOptimizer: stage > 0 && (offloaded(field(zero, 'offload_optimizer')) || field(zero, 'cpu_offload') === true),
    offloadParams: stage === 3 && (offloaded(field(zero, 'offload_param')) || field(zero, 'cpu_offload_params') === true),
    ...(reduceBucket === undefined ? {} : { reduceBucket }),
    ...(prefetchBucket === undefined ? {} : { prefetchBucket }),
    // DeepSpeed turns overlap_comm on by default at stage 3 only.
    overlapComm: typeof overlap === 'boolean' ? overlap : stage === 3,
  };
}

/** An accelerate config (`accelerate config` YAML): its distributed type, FSDP or DeepSpeed settings, and process count. */
export function accelerateConfig(data: Plain | undefined, read: (path: string) => Plain | undefined): { setup?: DistributedSetup; gpus?: number; gpusPerNode?: number; mixedPrecision?: AccelerateMixedPrecision } {
  const type = scalarText(field(data, 'distributed_type')).toUpperCase();
  const processes = field(data, 'num_processes');
  const machines = field(data, 'num_machines');
  const gpus = typeof processes === 'number' && processes > 0 ? processes : undefined;
  const perNode = gpus && typeof machines === 'number' && machines > 1 ? gpus / machines : undefined;
  const mixedPrecision = mixedPrecisionOf(scalarText(field(data, 'mixed_precision')));
  const counts = { ...(gpus ? { gpus } : {}), ...(perNode ? { gpusPerNode: perNode } : {}), ...(mixedPrecision ? { mixedPrecision } : {}) };
  if (type === 'FSDP') {
    const fsdp = field(data, 'fsdp_config');
    const strategy = field(fsdp, 'fsdp_sharding_strategy');
    const offload = field(fsdp, 'fsdp_offload_params') === true;
    return { setup: { kind: 'fsdp', ...fsdpStrategy((scalarText(strategy) || 'FULL_SHARD').toUpperCase()), ...(offload ? { offloadOptimizer: true, offloadParams: true } : {}) }, ...counts };
  }
  if (type === 'DEEPSPEED') {
    const ds = field(data, 'deepspeed_config');
    const file = field(ds, 'deepspeed_config_file');
    const fromFile = typeof file === 'string' ? deepSpeedConfig(read(file)) : undefined;
    if (fromFile) return { setup: fromFile, ...counts };
    const stageValue = field(ds, 'zero_stage');
    const stage = (typeof stageValue === 'number' && stageValue >= 0 && stageValue <= 3 ? stageValue : 2) as DistributedSetup['stage'];
    return { setup: { kind: 'zero', stage, offloadOptimizer: offloaded(field(ds, 'offload_optimizer_device')), offloadParams: stage === 3 && offloaded(field(ds, 'offload_param_device')), overlapComm: stage === 3 }, ...counts };
  }
  if (type === 'MULTI_GPU') return { setup: { kind: 'ddp', stage: 0 }, ...counts };
  return counts;
}

/** accelerate's `mixed_precision` as a config or `--mixed_precision` writes it: "no", "fp16", "bf16" (fp8 is not modelled). */
export type AccelerateMixedPrecision = 'no' | 'fp16' | 'bf16';

function mixedPrecisionOf(text: string | undefined): AccelerateMixedPrecision | undefined {
  const value = text?.toLowerCase();
  return value === 'no' || value === 'fp16' || value === 'bf16' ? value : undefined;
}

// ------------------------------------------------------------------ launch commands

export interface LaunchCommand {
  readonly gpus?: number;
  readonly gpusPerNode?: number;
  readonly configFile?: string;
  readonly deepSpeedFile?: string;
  readonly setup?: DistributedSetup;
  /** `accelerate launch --mixed_precision bf16`: over the config file's. */
  readonly mixedPrecision?: AccelerateMixedPrecision;
  /** The command as written (shortened), for the origin. */
  readonly text: string;
}

const option = (command: string, ...names: string[]): string | undefined => {
  for (const name of names) {
    const match = new RegExp(`(?:^|\\s)--${name}(?:=|\\s+)("[^"]*"|'[^']*'|\\S+)`).exec(command);
    if (match) return match[1]!.replace(/^["']|["']$/g, '');
  }
  return undefined;
};
const count = (text: string | undefined): number | undefined => (text !== undefined && /^\d+$/.test(text) && Number(text) > 0 ? Number(text) : undefined);

/** The first launch of `scriptName` by torchrun, `python -m torch.distributed.run|launch`, `accelerate launch` or the `deepspeed` launcher in a shell script or README. */
export function launchCommand(text: string, scriptName: string): LaunchCommand | undefined {
  const lines = text.slice(0, MAX_LAUNCH_CHARS).replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  const escaped = scriptName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const line of lines) {
    if (!new RegExp(`(^|[\\s/])${escaped}(\\s|$)`).test(line)) continue;
    const command = line.trim().replace(/^\$\s*/, '');
    const shown = command.length > 100 ? `${command.slice(0, 97)}...` : command;
    const scriptArguments = command.slice(command.indexOf(scriptName) + scriptName.length);
    const deepSpeedFile = option(scriptArguments, 'deepspeed', 'deepspeed_config');
    const withFile = deepSpeedFile ? { deepSpeedFile } : {};
    if (/\b(torchrun|torch\.distributed\.(run|launch))\b/.test(command)) {
      const perNode = count(option(command, 'nproc_per_node', 'nproc-per-node'));
      const nodes = count(option(command, 'nnodes')) ?? 1;
      return { ...(perNode ? { gpus: perNode * nodes, gpusPerNode: perNode } : {}), ...withFile, text: shown };
    }
    if (/\baccelerate\s+launch\b/.test(command)) {
      const processes = count(option(command, 'num_processes', 'num-processes'));
      const machines = count(option(command, 'num_machines', 'num-machines')) ?? 1;
      const configFile = option(command, 'config_file', 'config-file');
      let setup: DistributedSetup | undefined;
      if (/\s--use_fsdp\b/.test(command)) setup = { kind: 'fsdp', ...fsdpStrategy((option(command, 'fsdp_sharding_strategy') ?? 'FULL_SHARD').toUpperCase()), ...(option(command, 'fsdp_offload_params') === 'true' ? { offloadOptimizer: true, offloadParams: true } : {}) };
      else if (/\s--use_deepspeed\b/.test(command)) {
        const stage = (count(option(command, 'zero_stage')) ?? 2) as DistributedSetup['stage'];
        setup = { kind: 'zero', stage: stage > 3 ? 2 : stage, offloadOptimizer: option(command, 'offload_optimizer_device') === 'cpu', offloadParams: option(command, 'offload_param_device') === 'cpu' };
      } else if (/\s--multi_gpu\b/.test(command)) setup = { kind: 'ddp', stage: 0 };
      // The launcher's options come before the script's name; the script's own arguments are not its.
      const mixedPrecision = mixedPrecisionOf(option(command.slice(0, command.indexOf(scriptName)), 'mixed_precision', 'mixed-precision'));
      return { ...(processes ? { gpus: processes, ...(machines > 1 ? { gpusPerNode: processes / machines } : {}) } : {}), ...(configFile ? { configFile } : {}), ...(setup ? { setup } : {}), ...(mixedPrecision ? { mixedPrecision } : {}), ...withFile, text: shown };
    }
    if (/(^|\s)deepspeed\s/.test(command)) {
      const gpus = count(option(command, 'num_gpus', 'num-gpus'));
      const nodes = count(option(command, 'num_nodes', 'num-nodes')) ?? 1;
      return { ...(gpus ? { gpus: gpus * nodes, gpusPerNode: gpus } : {}), ...withFile, text: shown };
    }
  }
  return undefined;
}

// ------------------------------------------------------------------ the script

export interface DistributedReading {
  readonly distributed?: Found<DistributedSetup>;
  readonly gpuCount?: Found<number>;
  /** The mixed precision `accelerate launch` gives an `Accelerator()` built without `mixed_precision=`: its flag, else the project's config it reads. */
  readonly launchPrecision?: Found<Precision>;
}

/** `devices=4` (or a list of 4), with `num_nodes=2`: 8 GPUs. */
function lightningDevices(call: CallEvent): { gpus: number; perNode: number } | undefined {
  const devices = call.kwargs.get('devices') ?? call.kwargs.get('gpus');
  const perNode = typeof devices === 'number' && Number.isInteger(devices) && devices > 0 ? devices : isList(devices) && devices.length > 0 ? devices.length : undefined;
  if (perNode === undefined) return undefined;
  const nodes = call.kwargs.get('num_nodes');
  return { gpus: perNode * (typeof nodes === 'number' && nodes > 1 ? nodes : 1), perNode };
}

function offloadFlag(call: CallEvent, events: readonly CallEvent[]): boolean {
  const offload = call.kwargs.get('cpu_offload');
  if (offload === true) return true;
  // `cpu_offload=CPUOffload(offload_params=True)`: the call inside this one's arguments.
  return events.some((e) => CPU_OFFLOAD.test(e.qualified) && e.kwargs.get('offload_params') === true && e.node.startIndex >= call.node.startIndex && e.node.endIndex <= call.node.endIndex);
}

/** ZeRO at a stage given as a keyword (2 when absent or not 0-3); parameters are offloaded at stage 3 only. */
function zeroOf(stageValue: PyValue | undefined, offloadOptimizer: boolean, offloadParams: boolean): DistributedSetup {
  const stage = (typeof stageValue === 'number' && stageValue >= 0 && stageValue <= 3 ? stageValue : 2) as DistributedSetup['stage'];
  return { kind: 'zero', stage, offloadOptimizer, offloadParams: stage === 3 && offloadParams, overlapComm: stage === 3 };
}

/** The strategy the script itself sets up, before any file. */
function scriptStrategy(events: readonly CallEvent[], files: LaunchFiles | undefined, notes: string[]): Found<DistributedSetup> | undefined {
  const readJson = (path: string) => {
    const file = files?.read(path);
    if (!file) {
      notes.push(`${path} (the DeepSpeed config) is not in the project; ZeRO stage 0 is assumed.`);
      return undefined;
    }
    return { data: plainOf(readConfigText(file.text, formatOfPath(path)).root), shown: file.shown };
  };
  // A DeepSpeed config given as a file name or written in place.
  const deepSpeedOf = (config: PyValue | undefined) => deepSpeedConfig(typeof config === 'string' ? readJson(config)?.data : plainOfValue(config));
  // torch's FSDP and the Lightning and accelerate wrappers share its keywords.
  const fsdpOf = (call: CallEvent): DistributedSetup => ({ kind: 'fsdp', ...fsdpStrategy(enumName(call.kwargs.get('sharding_strategy')) || 'FULL_SHARD'), ...(offloadFlag(call, events) ? { offloadOptimizer: true, offloadParams: true } : {}) });
  for (const call of events) {
    const name = simpleName(call.qualified);
    if (HF_ARGUMENTS.test(call.qualified)) {
      const ds = call.kwargs.get('deepspeed');
      if (typeof ds === 'string' && ds !== '') {
        const file = readJson(ds);
        const setup = deepSpeedConfig(file?.data) ?? { kind: 'zero' as const, stage: 0 as const };
        return { value: setup, node: argumentNode(call, 'deepspeed'), origin: `${name}(deepspeed="${ds}")${file ? `: ${file.shown}` : ''}` };
      }
      const inline = deepSpeedConfig(plainOfValue(ds));
      if (inline) return { value: inline, node: argumentNode(call, 'deepspeed'), origin: `${name}(deepspeed={...})` };
      const fsdp = call.kwargs.get('fsdp');
      if (typeof fsdp === 'string' && fsdp !== '') return { value: hfFsdpWords(fsdp), node: argumentNode(call, 'fsdp'), origin: `${name}(fsdp="${fsdp}")` };
      if (isList(fsdp) && fsdp.length > 0) return { value: hfFsdpWords(fsdp.map((w) => enumName(w)).join(' ')), node: argumentNode(call, 'fsdp'), origin: `${name}(fsdp=[...])` };
    } else if (LIGHTNING.test(call.qualified)) {
      const strategy = call.kwargs.get('strategy');
      const setup = typeof strategy === 'string' ? lightningStrategy(strategy) : undefined;
      if (setup) return { value: setup, node: argumentNode(call, 'strategy'), origin: `${name}(strategy="${strategy as string}")` };
    } else if (LIGHTNING_STRATEGY.test(call.qualified)) {
      if (name === 'DDPStrategy') return { value: { kind: 'ddp', stage: 0, bucketView: call.kwargs.get('gradient_as_bucket_view') === true }, node: call.node, origin: 'DDPStrategy(...)' };
      if (name === 'FSDPStrategy') return { value: fsdpOf(call), node: call.node, origin: 'FSDPStrategy(...)' };
      const fromConfig = deepSpeedOf(call.kwargs.get('config'));
      if (fromConfig) return { value: fromConfig, node: call.node, origin: 'DeepSpeedStrategy(config=...)' };
      const value = zeroOf(call.kwargs.get('stage'), call.kwargs.get('offload_optimizer') === true, call.kwargs.get('offload_parameters') === true);
      return { value, node: call.node, origin: `DeepSpeedStrategy(stage=${value.stage})` };
    } else if (ACCELERATE_PLUGIN.test(call.qualified)) {
      if (name === 'FullyShardedDataParallelPlugin') return { value: fsdpOf(call), node: call.node, origin: 'FullyShardedDataParallelPlugin(...)' };
      const fromConfig = deepSpeedOf(call.kwargs.get('hf_ds_config'));
      if (fromConfig) return { value: fromConfig, node: call.node, origin: 'DeepSpeedPlugin(hf_ds_config=...)' };
      const value = zeroOf(call.kwargs.get('zero_stage'), call.kwargs.get('offload_optimizer_device') === 'cpu', call.kwargs.get('offload_param_device') === 'cpu');
      return { value, node: call.node, origin: `DeepSpeedPlugin(zero_stage=${value.stage})` };
    } else if (DEEPSPEED_INITIALIZE.test(call.qualified)) {
      const config = call.kwargs.get('config') ?? call.kwargs.get('config_params');
      const keyword = call.kwargs.has('config') ? 'config' : 'config_params';
      const fromConfig = deepSpeedOf(config);
      if (fromConfig) return { value: fromConfig, node: argumentNode(call, keyword), origin: `deepspeed.initialize(${keyword}=${typeof config === 'string' ? `"${config}"` : '{...}'})` };
    } else if (FSDP.test(call.qualified)) {
      return { value: fsdpOf(call), node: call.node, origin: `FullyShardedDataParallel(${call.kwargs.has('sharding_strategy') ? `sharding_strategy=${enumName(call.kwargs.get('sharding_strategy'))}` : '...'})` };
    } else if (FSDP2.test(call.qualified)) {
      return { value: { kind: 'fsdp', stage: call.kwargs.get('reshard_after_forward') === false ? 2 : 3 }, node: call.node, origin: 'fully_shard(...)' };
    } else if (DDP.test(call.qualified)) {
      return { value: { kind: 'ddp', stage: 0, bucketView: call.kwargs.get('gradient_as_bucket_view') === true }, node: call.node, origin: 'DistributedDataParallel(...)' };
    }
  }
  return undefined;
}

/**
 * The job's strategy and GPU count: the script's own strategy first (with the config file it
 * names), else the launch command's (an accelerate config it passes, its flags); the count from
 * Lightning's `devices`, then the launch command, then the accelerate config. A launch of several
 * processes with no strategy is DDP (the Trainer and accelerate wrap the model in it).
 */
export function readDistributed(events: readonly CallEvent[], files: LaunchFiles | undefined): DistributedReading & { notes: string[] } {
  const notes: string[] = [];
  // Launch scripts and configs are looked for only beside scripts of the libraries that run on several GPUs.
  if (!events.some((e) => MULTI_GPU_LIBRARIES.test(e.qualified))) files = undefined;
  let distributed = scriptStrategy(events, files, notes);
  let gpuCount: Found<number> | undefined;
  let gpusPerNode: number | undefined;
  let launchPrecision: Found<Precision> | undefined;
  for (const call of events) {
    if (!LIGHTNING.test(call.qualified)) continue;
    const devices = lightningDevices(call);
    if (devices) {
      gpuCount = { value: devices.gpus, node: argumentNode(call, call.kwargs.has('devices') ? 'devices' : 'gpus'), origin: `${simpleName(call.qualified)}(devices=...${devices.gpus !== devices.perNode ? ', num_nodes=...' : ''})` };
      gpusPerNode = devices.perNode;
      break;
    }
  }
  const anchor = distributed?.node ?? events[0]?.node;
  if (files && anchor) {
    const launch = LAUNCH_FILES.map((name) => ({ name, file: files.read(name) })).find(({ file }) => file && launchCommand(file.text, files.scriptName));
    const command = launch?.file ? launchCommand(launch.file.text, files.scriptName) : undefined;
    const where = launch?.file?.shown ?? '';
    const yamlName = command?.configFile ?? (command ? undefined : ACCELERATE_FILES.find((name) => files.read(name)));
    const yamlFile = yamlName === undefined ? undefined : files.read(yamlName);
    const readData = (path: string) => {
      const file = files.read(path);
      return file ? plainOf(readConfigText(file.text, formatOfPath(path)).root) : undefined;
    };
    const accelerate = yamlFile ? accelerateConfig(plainOf(readConfigText(yamlFile.text, 'yaml').root), readData) : undefined;
    if (!distributed && command?.deepSpeedFile) {
      const setup = deepSpeedConfig(readData(command.deepSpeedFile));
      if (setup) distributed = { value: { ...setup, file: where }, node: anchor, origin: `--deepspeed ${command.deepSpeedFile} in ${where}` };
    }
    if (!distributed && command?.setup) distributed = { value: { ...command.setup, file: where }, node: anchor, origin: `${command.text} (${where})` };
    if (!distributed && accelerate?.setup) distributed = { value: { ...accelerate.setup, file: yamlFile!.shown }, node: anchor, origin: `accelerate config ${yamlFile!.shown}` };
    if (!gpuCount && command?.gpus) {
      gpuCount = { value: command.gpus, node: anchor, origin: `${command.text} (${where})` };
      gpusPerNode = command.gpusPerNode;
    }
    if (!gpuCount && accelerate?.gpus) {
      gpuCount = { value: accelerate.gpus, node: anchor, origin: `num_processes in ${yamlFile!.shown}` };
      gpusPerNode = accelerate.gpusPerNode;
    }
    launchPrecision = acceleratePrecision(events, command, where, accelerate?.mixedPrecision, yamlFile?.shown);
    if (!distributed && gpuCount && gpuCount.value > 1) distributed = { value: { kind: 'ddp', stage: 0, ...(where ? { file: where } : {}) }, node: anchor, origin: `${gpuCount.origin}: one replica per process (DDP)` };
  }
  if (distributed && gpusPerNode && distributed.value.gpusPerNode === undefined) distributed = { ...distributed, value: { ...distributed.value, gpusPerNode } };
  return { ...(distributed ? { distributed } : {}), ...(gpuCount ? { gpuCount } : {}), ...(launchPrecision ? { launchPrecision } : {}), notes };
}

/**
 * `Accelerator()` without `mixed_precision=` takes it from the environment `accelerate launch` sets:
 * the launch line's `--mixed_precision`, else the `mixed_precision` of the config it passes (or the
 * project's accelerate config when the launch names none). accelerate's default config in the
 * user's home is not the project's and is not read.
 */
function acceleratePrecision(events: readonly CallEvent[], command: LaunchCommand | undefined, where: string, fromConfig: AccelerateMixedPrecision | undefined, configShown: string | undefined): Found<Precision> | undefined {
  const accelerator = events.find((call) => ACCELERATOR.test(call.qualified));
  if (!accelerator || accelerator.kwargs.has('mixed_precision')) return undefined;
  const launched = command && /\baccelerate\s+launch\b/.test(command.text) ? command : undefined;
  const value = launched?.mixedPrecision ?? fromConfig;
  if (!value) return undefined;
  const origin = launched?.mixedPrecision ? `${launched.text} (${where})` : `mixed_precision: ${value} in ${configShown ?? 'the accelerate config'}`;
  return { value: value === 'bf16' ? 'bf16-mixed' : value === 'fp16' ? 'fp16-mixed' : 'fp32', node: accelerator.node, origin: `Accelerator() under accelerate launch: ${origin}` };
}
