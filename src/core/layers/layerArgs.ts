import { isLayerValue, isUnresolved, type LayerCall, type LayerValue, type Unresolved, type Value } from '../analysis/layerCall';

/**
 * Thrown with a plain message when a layer cannot be sized: an argument the analyzer could not
 * resolve, an argument PyTorch would reject, or inputs that do not fit the layer.
 */
export class LayerArgumentError extends Error {}

/** What LayerArgs reads: a layer construction (a LayerCall, or the `layer` of a nested LayerValue). */
export type LayerConstruction = LayerCall | LayerValue['layer'];

/** Reads a layer call's arguments the way Python binds them: by position or keyword, with defaults. */
export class LayerArgs {
  constructor(private readonly call: LayerConstruction) {}

  /** The torch.nn class name. */
  get type(): string {
    return this.call.type;
  }

  /** The argument as written, or undefined when it is not given (None is `null`). */
  value(position: number, name: string): Value | undefined {
    return name in this.call.kwargs ? this.call.kwargs[name] : position >= 0 ? this.call.args[position] : undefined;
  }

  /** Whether the argument is given and not None. */
  has(position: number, name: string): boolean {
    const value = this.value(position, name);
    return value !== undefined && value !== null;
  }

  int(position: number, name: string, fallback?: number): number {
    const value = this.resolved(position, name) ?? fallback;
    if (value === undefined) throw new LayerArgumentError(`${this.type} needs \`${name}\``);
    return this.toInt(value, name);
  }

  /** A size that may be zero (features, embeddings). */
  count(position: number, name: string, fallback?: number): number {
    return this.atLeast(this.int(position, name, fallback), 0, name);
  }

  /** A size of at least one (channels, kernel sizes, strides, layers). */
  positive(position: number, name: string, fallback?: number): number {
    return this.atLeast(this.int(position, name, fallback), 1, name);
  }

  /** An int, or undefined where the argument is absent or None. */
  optionalInt(position: number, name: string): number | undefined {
    const value = this.resolved(position, name);
    return value === undefined || value === null ? undefined : this.toInt(value, name);
  }

  float(position: number, name: string, fallback?: number): number {
    const value = this.resolved(position, name) ?? fallback;
    if (value === undefined) throw new LayerArgumentError(`${this.type} needs \`${name}\``);
    if (typeof value === 'boolean') return value ? 1 : 0;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new LayerArgumentError(`${this.type} \`${name}\` is not a number`);
    return value;
  }

  bool(position: number, name: string, fallback: boolean): boolean {
    const value = this.resolved(position, name);
    if (value === undefined || value === null) return fallback;
    if (isLayerValue(value)) return true;
    return Boolean(value);
  }

  /** A string argument (`mode='sum'`), or the fallback where absent or None. */
  string(position: number, name: string, fallback: string): string {
    const value = this.resolved(position, name);
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'string') throw new LayerArgumentError(`${this.type} \`${name}\` should be a string`);
    return value;
  }

  /** An int or a tuple of ints, spread over `dims` spatial dimensions (`kernel_size=3` -> [3, 3]). */
  ints(position: number, name: string, dims: number, fallback?: number | readonly number[]): number[] {
    const value = this.resolved(position, name) ?? fallback;
    if (value === undefined) throw new LayerArgumentError(`${this.type} needs \`${name}\``);
    const result = this.optionalInts(value, name, dims);
    if (result.some((v) => v === undefined)) throw new LayerArgumentError(`${this.type} \`${name}\` should be an int or ${dims} ints`);
    return result as number[];
  }

  /** `ints` of at least one each (kernel_size, stride, dilation). */
  positives(position: number, name: string, dims: number, fallback?: number | readonly number[]): number[] {
    return this.ints(position, name, dims, fallback).map((v) => this.atLeast(v, 1, name));
  }

  /** `ints` of at least zero each (padding). */
  counts(position: number, name: string, dims: number, fallback?: number | readonly number[]): number[] {
    return this.ints(position, name, dims, fallback).map((v) => this.atLeast(v, 0, name));
  }

  /**
   * An int or a tuple of `dims` entries, each an int or None (`AdaptiveAvgPool2d((None, 7))`);
   * undefined where the whole argument is absent or None.
   */
  intsOrNone(position: number, name: string, dims: number): (number | undefined)[] | undefined {
    const value = this.resolved(position, name);
    return value === undefined || value === null ? undefined : this.optionalInts(value, name, dims);
  }

  /** A float or a tuple of `dims` floats (`scale_factor=2.0`); undefined where absent or None. */
  floats(position: number, name: string, dims: number): number[] | undefined {
    const value = this.resolved(position, name);
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number') return Array.from({ length: dims }, () => value);
    if (Array.isArray(value) && value.length === dims && value.every((v) => typeof v === 'number')) return value;
    if (Array.isArray(value) && value.some(isUnresolved)) throw this.unresolvedError(name, value.find(isUnresolved));
    throw new LayerArgumentError(`${this.type} \`${name}\` should be a number or ${dims} numbers`);
  }

  /** `normalized_shape`-style arguments: an int or a list of ints of any length, each at least `minimum`. */
  shape(position: number, name: string, minimum = -Infinity): number[] {
    const value = this.resolved(position, name);
    if (typeof value === 'number') return [this.atLeast(this.toInt(value, name), minimum, name)];
    if (Array.isArray(value)) {
      const unresolved = value.find(isUnresolved);
      if (unresolved) throw this.unresolvedError(name, unresolved);
      if (value.every((v) => typeof v === 'number')) return value.map((v) => this.atLeast(this.toInt(v, name), minimum, name));
    }
    throw new LayerArgumentError(`${this.type} needs \`${name}\` as an int or a list of ints`);
  }

  /**
   * A layer passed as an argument (`TransformerEncoder(encoder_layer, ...)`, `norm=nn.LayerNorm(d)`),
   * as LayerArgs of its own; undefined where absent or None.
   */
  layer(position: number, name: string): LayerArgs | undefined {
    const value = this.resolved(position, name);
    if (value === undefined || value === null) return undefined;
    if (!isLayerValue(value)) throw new LayerArgumentError(`${this.type} \`${name}\` should be a torch.nn layer`);
    return new LayerArgs(value.layer);
  }

  /** The value, with Unresolved turned into an error that says why. */
  private resolved(position: number, name: string): Exclude<Value, Unresolved> | undefined {
    const value = this.value(position, name);
    if (isUnresolved(value)) throw this.unresolvedError(name, value);
    return value;
  }

  private unresolvedError(name: string, value: { reason: string } | undefined): LayerArgumentError {
    return new LayerArgumentError(`${this.type} \`${name}\`: ${value?.reason ?? 'unknown'}`);
  }

  private atLeast(value: number, minimum: number, name: string): number {
    if (value < minimum) throw new LayerArgumentError(`${this.type} \`${name}\` must be at least ${minimum}, not ${value}`);
    return value;
  }

  private toInt(value: Value, name: string): number {
    if (typeof value === 'boolean') return value ? 1 : 0;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new LayerArgumentError(`${this.type} \`${name}\` is not a number`);
    if (!Number.isInteger(value)) throw new LayerArgumentError(`${this.type} \`${name}\` should be an int, not ${value}`);
    return value;
  }

  private optionalInts(value: Value, name: string, dims: number): (number | undefined)[] {
    if (typeof value === 'number' || typeof value === 'boolean') return Array.from({ length: dims }, () => this.toInt(value, name));
    if (Array.isArray(value) && value.length === dims) {
      return value.map((v: Value) => {
        if (isUnresolved(v)) throw this.unresolvedError(name, v);
        return v === null ? undefined : this.toInt(v, name);
      });
    }
    throw new LayerArgumentError(`${this.type} \`${name}\` should be an int or ${dims} ints`);
  }
}
