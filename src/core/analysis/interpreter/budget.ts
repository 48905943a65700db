/** Raised when an analysis has spent its steps or its time; the caller falls back and says so. */
export class BudgetExceeded extends Error {}

/**
 * What one file's analysis may spend: interpreter steps (deterministic) and wall-clock time (the
 * editor's guarantee). Shared by every interpreter of the file; `limit()` carves a smaller share
 * out of it for one stage, so discovery cannot starve the models' forward passes.
 */
export class Budget {
  private steps = 0;
  private deadline: number;

  constructor(
    private readonly maxSteps: number,
    maxMillis: number,
    private readonly parent?: Budget,
  ) {
    this.deadline = performance.now() + maxMillis;
  }

  /** A share of this budget: at most `maxSteps` and `maxMillis` of what is left. */
  limit(maxSteps: number, maxMillis: number): Budget {
    return new Budget(maxSteps, maxMillis, this);
  }

  /** Whether this budget (or the one it is carved from) is used up: steps spent or time past. */
  spent(): boolean {
    return this.steps >= this.maxSteps || performance.now() > this.deadline || (this.parent?.spent() ?? false);
  }

  /**
   * Gives back time spent on work this budget does not pay for (parsing and running a module the
   * script imports, which the import's own budget bounds), here and in the budgets it is carved from.
   */
  postpone(millis: number): void {
    this.deadline += millis;
    this.parent?.postpone(millis);
  }

  tick(): void {
    this.steps += 1;
    if (this.steps > this.maxSteps) throw new BudgetExceeded(`analysis stopped after ${this.maxSteps} steps`);
    // Reading the clock costs more than a step: look every 1,024 steps.
    if ((this.steps & 1023) === 0 && performance.now() > this.deadline) throw new BudgetExceeded('analysis ran out of time');
    this.parent?.tick();
  }
}
