import { isUnresolved, type LayerCall, type Value } from '../analysis/modelDescription';

/** Thrown when a layer's shape or size depends on an argument the analyzer could not resolve. */
export class LayerArgumentError extends Error {}

/** Reads a layer call's arguments the way Python binds them: by position or keyword, with defaults. */
export class LayerArgs {
  constructor(private readonly call: LayerCall) {}

  value(position: number, name: string): Value | undefined {
    return name in this.call.kwargs ? this.call.kwargs[name] : this.call.args[position];
  }

  int(position: number, name: string, fallback?: number): number {
    const value = this.value(position, name) ?? fallback;
    if (value === undefined) throw new LayerArgumentError(`${this.call.type} needs \`${name}\``);
    if (isUnresolved(value)) throw new LayerArgumentError(`${this.call.type} \`${name}\`: ${value.reason}`);
    if (typeof value === 'boolean') return value ? 1 : 0;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new LayerArgumentError(`${this.call.type} \`${name}\` is not a number`);
    }
    return value;
  }

  bool(position: number, name: string, fallback: boolean): boolean {
    const value = this.value(position, name);
    if (value === undefined || value === null) return fallback;
    if (isUnresolved(value)) throw new LayerArgumentError(`${this.call.type} \`${name}\`: ${value.reason}`);
    return Boolean(value);
  }

  /** An int or a tuple of ints, spread over `dims` spatial dimensions (`kernel_size=3` -> [3, 3]). */
  ints(position: number, name: string, dims: number, fallback?: number | readonly number[]): number[] {
    const value = this.value(position, name) ?? fallback;
    if (value === undefined) throw new LayerArgumentError(`${this.call.type} needs \`${name}\``);
    if (isUnresolved(value)) throw new LayerArgumentError(`${this.call.type} \`${name}\`: ${value.reason}`);
    if (typeof value === 'number') return Array.from({ length: dims }, () => value);
    if (Array.isArray(value) && value.length === dims && value.every((v) => typeof v === 'number')) {
      return value as number[];
    }
    throw new LayerArgumentError(`${this.call.type} \`${name}\` should be an int or ${dims} ints`);
  }

  /** `normalized_shape`-style arguments: an int or a list of ints of any length. */
  shape(position: number, name: string): number[] {
    const value = this.value(position, name);
    if (typeof value === 'number') return [value];
    if (Array.isArray(value) && value.every((v) => typeof v === 'number')) return value as number[];
    if (isUnresolved(value)) throw new LayerArgumentError(`${this.call.type} \`${name}\`: ${value.reason}`);
    throw new LayerArgumentError(`${this.call.type} needs \`${name}\` as an int or a list of ints`);
  }
}
