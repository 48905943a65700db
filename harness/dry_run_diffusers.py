"""diffusers in a dry run, with no network: the models and noise schedulers a script loads by hub id.

- Models (`UNet2DConditionModel.from_pretrained(repo, subfolder="unet")`, the VAE, ControlNets): built
  from the subfolder's config, the one in the local cache or the catalog's (the spec's `hubConfigs`,
  keyed `repo/subfolder`), in the dtype asked for; weights are never read, as they change values, not
  memory. A model with neither stops with the file to download.
- Noise schedulers: from their config where it is known, else from the class's defaults (a schedule
  holds a few thousand numbers; it changes no memory on the GPU).

The harness (harness/dry_run.py) installs these as the script imports diffusers.
"""
from __future__ import annotations

from typing import Any, Callable, Dict

from harness.dry_run_hub import is_missing, hub_config, unknown_checkpoint

#: What from_pretrained takes to find the files; load_config takes the same.
_FINDING = ("subfolder", "cache_dir", "revision", "token", "local_files_only", "variant")


def _config(cls: Any, name: Any, kwargs: Dict[str, Any]) -> Any:
    """The subfolder's config: the local one (a folder, the hub's cache), else the catalog's; None where neither."""
    try:
        return cls.load_config(name, **{key: kwargs[key] for key in _FINDING if kwargs.get(key) is not None})
    except BaseException as error:
        if not is_missing(error):
            raise
    return hub_config(name, kwargs.get("subfolder"))


def _patch_models(module: Any) -> None:
    """`ModelMixin.from_pretrained`: built from the config, in the dtype asked for."""
    import torch
    model_class = module.ModelMixin

    def from_pretrained(cls: Any, name: Any, *args: Any, **kwargs: Any) -> Any:
        config = _config(cls, name, kwargs)
        if config is None:
            raise unknown_checkpoint(name, kwargs.get("subfolder"))
        model = cls.from_config({key: value for key, value in dict(config).items() if not key.startswith("_")})
        dtype = kwargs.get("torch_dtype")
        if isinstance(dtype, torch.dtype):
            model = model.to(dtype)
        model.eval()  # as from_pretrained leaves it
        return model

    model_class.from_pretrained = classmethod(from_pretrained)


def _patch_schedulers(module: Any) -> None:
    """`SchedulerMixin.from_pretrained`: from the known config, else the class's defaults."""
    scheduler_class = module.SchedulerMixin
    original = scheduler_class.from_pretrained.__func__

    def from_pretrained(cls: Any, name: Any = None, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(cls, name, *args, **kwargs)
        except BaseException as error:
            if not is_missing(error):
                raise
        config = hub_config(name, kwargs.get("subfolder")) or {}
        return cls.from_config({key: value for key, value in config.items() if not key.startswith("_")})

    scheduler_class.from_pretrained = classmethod(from_pretrained)


def after_import_patches() -> Dict[str, Callable[[Any], None]]:
    """The modules to patch as the script imports them (harness/dry_run_frameworks.py's AfterImport)."""
    return {
        "diffusers.models.modeling_utils": _patch_models,
        "diffusers.schedulers.scheduling_utils": _patch_schedulers,
    }
