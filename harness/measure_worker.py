"""Runs a user's training script until it has made N optimizer steps, in a process of its own.

    python3 -m harness.measure_worker --result FILE --steps N SCRIPT.py [ARGS...]

The script runs as `__main__` (runpy), with sys.argv = [SCRIPT.py, ARGS...]. Every
torch.optim.Optimizer created while it runs gets its `step` wrapped (as a bound method, so LR
schedulers and GradScaler still work): each call is counted, and after the Nth the worker stops
the script by raising `StepLimitReached`, a BaseException that `except Exception` in the script
does not catch. The result (JSON) names how many steps ran, how the script ended, and PyTorch's
peak memory counters.
"""
from __future__ import annotations

import argparse
import os
import resource
import runpy
import sys
import time
import traceback
import types
from typing import Any, Dict, List

from .worker import MIB, _first_line, is_oom, probe, write_result


class StepLimitReached(BaseException):
    """Raised after the requested number of optimizer steps."""


class StepCounter:
    def __init__(self, limit: int):
        self.limit = limit
        self.steps = 0
        self.first_step_at: float = 0.0
        self.last_step_at: float = 0.0
        self.optimizers: List[str] = []

    def install(self) -> None:
        import torch

        counter = self
        original_init = torch.optim.Optimizer.__init__

        def init(optimizer, *args, **kwargs):
            original_init(optimizer, *args, **kwargs)
            if getattr(optimizer, "_harness_counted", False):
                return
            optimizer._harness_counted = True
            counter.optimizers.append(type(optimizer).__name__)
            step = type(optimizer).step

            def counted_step(self, *step_args, **step_kwargs):
                if counter.steps == 0:
                    counter.first_step_at = time.time()
                value = step(self, *step_args, **step_kwargs)
                counter.steps += 1
                counter.last_step_at = time.time()
                if counter.steps >= counter.limit:
                    raise StepLimitReached()
                return value

            optimizer.step = types.MethodType(counted_step, optimizer)

        torch.optim.Optimizer.__init__ = init


def run(script: str, script_args: List[str], steps: int) -> Dict[str, Any]:
    import torch

    counter = StepCounter(steps)
    counter.install()
    result: Dict[str, Any] = {"status": None, "oom": False, "error": None, "system": probe("cpu")}  # versions only: no CUDA context before the script's own
    script = os.path.abspath(script)
    sys.argv = [script, *script_args]
    sys.path.insert(0, os.path.dirname(script))
    started = time.time()
    try:
        runpy.run_path(script, run_name="__main__")
        result["status"] = "finished" if counter.steps else "no-steps"
    except StepLimitReached:
        result["status"] = "ok"
    except SystemExit as exit_:
        code = exit_.code
        result["status"] = "finished" if code in (None, 0) else "error"
        if result["status"] == "error":
            result["error"] = f"the script exited with {code!r}"
    except BaseException as error:  # noqa: BLE001 - the script's failure is the measurement's outcome
        result["status"] = "oom" if is_oom(error) else "error"
        result["oom"] = result["status"] == "oom"
        result["error"] = _first_line(error)
        if result["status"] == "error":
            result["traceback"] = traceback.format_exc(limit=8)[-4000:]
    result.update({
        "steps": counter.steps,
        "requestedSteps": steps,
        "optimizers": counter.optimizers,
        "scriptSeconds": round(time.time() - started, 3),
        "window": [counter.first_step_at, counter.last_step_at] if counter.steps else None,
    })
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        result["torchMaxAllocatedMiB"] = round(max(torch.cuda.max_memory_allocated(i) for i in range(torch.cuda.device_count())) / MIB, 3)
        result["torchMaxReservedMiB"] = round(max(torch.cuda.max_memory_reserved(i) for i in range(torch.cuda.device_count())) / MIB, 3)
        result["usedCuda"] = True
    else:
        result["torchMaxAllocatedMiB"] = None
        result["torchMaxReservedMiB"] = None
        result["usedCuda"] = False
    result["cpuMaxRssMiB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 3)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m harness.measure_worker")
    parser.add_argument("--result", required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    # The script's own prints go to stderr: stdout belongs to the harness's progress lines.
    sys.stdout = sys.stderr
    write_result(args.result, run(args.script, args.args, args.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
