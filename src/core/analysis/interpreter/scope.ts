import type { PyValue } from './pyValues';

/** Python names in one function call or module, falling back to the enclosing scope. */
export class Scope {
  private readonly values = new Map<string, PyValue>();

  constructor(readonly parent?: Scope) {}

  set(name: string, value: PyValue): void {
    this.values.set(name, value);
  }

  get(name: string): PyValue | undefined {
    return this.values.has(name) ? this.values.get(name) : this.parent?.get(name);
  }

  has(name: string): boolean {
    return this.values.has(name) || (this.parent?.has(name) ?? false);
  }

  child(): Scope {
    return new Scope(this);
  }

  /** Names bound directly in this scope, in binding order. */
  ownNames(): string[] {
    return [...this.values.keys()];
  }
}
