"""The training frameworks in a dry run (harness/dry_run.py): Lightning's Trainer, torch.distributed
as one process on one GPU, and the sharded runs (FSDP, DeepSpeed) a dry run cannot show, each
patched as the script imports it (AfterImport)."""
from __future__ import annotations

import functools
import importlib
from typing import Any, Callable, Dict, Optional, Tuple


class NotDryRunnable(BaseException):
    """What the dry run cannot run on the CPU, said plainly (sharding, 4-bit loading...)."""


#: The run in progress; harness/dry_run.py sets it (it runs as `__main__`, so this module cannot
#: import its state).
current_run: Callable[[], Optional[Any]] = lambda: None


class AfterImport:
    """A meta-path finder that runs `patches[name](module)` once the module `name` is imported."""

    def __init__(self, patches: Dict[str, Callable[[Any], None]]):
        self.patches = patches

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        patch = self.patches.get(name)
        if patch is None:
            return None
        import importlib.machinery
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module: Any) -> None:
            original(module)
            patch(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


#: Strategies that run the same training step on each GPU: the dry run is that step on one.
DATA_PARALLEL_STRATEGIES = {"ddp", "ddp_spawn", "ddp_fork", "ddp_notebook", "dp", "ddp_find_unused_parameters_true", "ddp_find_unused_parameters_false"}


def lightning_trainer(module: Any) -> None:
    """Lightning's Trainer as the dry run needs it: its logs and checkpoints in the run's folder (or
    none), no sanity validation before the first step, and one process on one GPU. The training
    step, precision, gradient accumulation and optimizers stay the script's."""
    trainer_class = getattr(module, "Trainer", None)
    if trainer_class is None:
        return
    original = trainer_class.__init__

    # Its signature kept: LightningCLI (jsonargparse) reads the Trainer's parameters from it.
    @functools.wraps(original)
    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        run = current_run()
        if run is not None:
            kwargs["default_root_dir"] = run.tmp
            # The script's logger may write elsewhere or reach a service (W&B); callbacks such as
            # LearningRateMonitor need one: a CSV logger in the run's folder.
            loggers = importlib.import_module(module.__name__.split(".trainer")[0] + ".loggers")
            kwargs["logger"] = loggers.CSVLogger(run.tmp) if kwargs.get("logger", True) is not False else False
            kwargs["enable_checkpointing"] = False
            kwargs["enable_progress_bar"] = False
            kwargs["enable_model_summary"] = False
            kwargs["num_sanity_val_steps"] = 0
            callbacks = kwargs.get("callbacks")
            if callbacks is not None:
                listed = callbacks if isinstance(callbacks, (list, tuple)) else [callbacks]
                kwargs["callbacks"] = [c for c in listed if "Checkpoint" not in type(c).__name__]
            strategy = kwargs.get("strategy")
            if isinstance(strategy, str) and strategy in DATA_PARALLEL_STRATEGIES or type(strategy).__name__ in ("DDPStrategy", "DataParallelStrategy"):
                kwargs["strategy"] = "auto"
            if kwargs.get("devices") not in (None, 1, "1", [0], "auto") or kwargs.get("num_nodes", 1) != 1:
                run.notes.append(f"Lightning's Trainer(devices={kwargs.get('devices')!r}, num_nodes={kwargs.get('num_nodes', 1)!r}): the dry run is one of those processes, on one GPU")
                kwargs["devices"], kwargs["num_nodes"] = 1, 1
        original(self, *args, **kwargs)

    trainer_class.__init__ = init


#: Whether the script made a process group (reset for each run).
DISTRIBUTED = {"initialized": False}


def patch_distributed() -> None:
    """One process on one GPU: process groups, DataParallel and DDP wrappers, and spawned workers
    run in this process as rank 0 of 1."""
    import torch
    import torch.nn as nn

    class PassThrough(nn.Module):
        """DataParallel / DistributedDataParallel on one GPU: the module itself, under `.module`."""

        def __init__(self, module: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__()
            self.module = module

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            return self.module(*args, **kwargs)

    nn.DataParallel = PassThrough  # type: ignore[misc,assignment]
    nn.parallel.DataParallel = PassThrough  # type: ignore[misc,assignment]
    nn.parallel.DistributedDataParallel = PassThrough  # type: ignore[misc,assignment]
    try:
        nn.SyncBatchNorm.convert_sync_batchnorm = classmethod(lambda cls, module, *a, **k: module)  # type: ignore[method-assign,assignment]
    except Exception:
        pass
    try:
        import torch.distributed as dist
        for name in ("barrier", "all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter"):
            setattr(dist, name, lambda *a, **k: None)

        def init_process_group(*args: Any, **kwargs: Any) -> None:
            DISTRIBUTED["initialized"] = True

        def destroy_process_group(*args: Any, **kwargs: Any) -> None:
            DISTRIBUTED["initialized"] = False

        dist.init_process_group, dist.destroy_process_group = init_process_group, destroy_process_group  # type: ignore[assignment]
        dist.is_available = lambda: True  # type: ignore[assignment]
        # Initialized once the script initialized it: frameworks (Lightning) that find a process group
        # take their distributed paths, which a script that made none never runs.
        dist.is_initialized = lambda: DISTRIBUTED["initialized"]  # type: ignore[assignment]
        dist.get_rank = lambda *a, **k: 0  # type: ignore[assignment]
        dist.get_world_size = lambda *a, **k: 1  # type: ignore[assignment]
    except Exception:
        pass
    import torch.multiprocessing as torch_mp

    def spawn(fn: Any, args: Tuple[Any, ...] = (), nprocs: int = 1, join: bool = True, daemon: bool = False, start_method: str = "spawn") -> None:
        fn(0, *args)

    torch_mp.spawn = spawn  # type: ignore[assignment]


def _sharding_refusals() -> Dict[str, Callable[[Any], None]]:
    """FSDP and DeepSpeed split weights, gradients and optimizer state over the GPUs: a dry run of
    one process on one GPU would show an unsharded model, not what each GPU holds. It stops and
    says so; the static estimate models sharding per GPU count."""
    def refuse(what: str) -> Callable[..., Any]:
        def stop(*args: Any, **kwargs: Any) -> Any:
            raise NotDryRunnable(f"the script shards its model with {what}: a dry run is one process on one GPU and cannot show what each GPU holds; the static estimate gives memory per GPU for the GPU count")
        return stop

    def fsdp(module: Any) -> None:
        module.FullyShardedDataParallel.__init__ = refuse("FSDP")

    def fsdp2(module: Any) -> None:
        module.fully_shard = refuse("fully_shard (FSDP2)")

    def deepspeed(module: Any) -> None:
        module.initialize = refuse("DeepSpeed")

    # Patched as the script imports them (importing FSDP costs time, and fails on torch 1.13 under Python 3.11).
    return {"torch.distributed.fsdp.fully_sharded_data_parallel": fsdp, "torch.distributed._composable.fsdp.fully_shard": fsdp2, "deepspeed": deepspeed}


def after_import_patches() -> Dict[str, Callable[[Any], None]]:
    """The frameworks' modules to patch as the script imports them (AfterImport)."""
    return {"lightning.pytorch.trainer.trainer": lightning_trainer, "pytorch_lightning.trainer.trainer": lightning_trainer, **_sharding_refusals()}
