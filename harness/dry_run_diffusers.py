"""diffusers in a dry run, with no network: the models and noise schedulers a script loads by hub id.

- Models (`UNet2DConditionModel.from_pretrained(repo, subfolder="unet")`, the VAE, ControlNets): built
  from the subfolder's config, the one in the local cache or the catalog's (the spec's `hubConfigs`,
  keyed `repo/subfolder`), in the dtype asked for; weights are never read, as they change values, not
  memory. A model with neither stops with the file to download.
- Noise schedulers: from their config where it is known, else from the class's defaults (a schedule
  holds a few thousand numbers; it changes no memory on the GPU).
- Whole pipelines (`StableDiffusionPipeline.from_pretrained(repo, torch_dtype=...)`, whose `.unet`
  a script then trains): each component built as above from the catalog's model_index (the spec's
  `repo/model_index.json`), the safety checker and image encoder left out.

The harness (harness/dry_run.py) installs these as the script imports diffusers.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Dict

from harness.dry_run_hub import hub_config, is_missing, on_missing, unknown_checkpoint

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


def _scheduler(cls: Any, name: Any, kwargs: Dict[str, Any], error: BaseException) -> Any:
    """A noise scheduler from the known config, else the class's defaults."""
    config = hub_config(name, kwargs.get("subfolder")) or {}
    return cls.from_config({key: value for key, value in config.items() if not key.startswith("_")})


def _component(library: str, class_name: str, name: Any, subfolder: str, dtype: Any) -> Any:
    """One component of a pipeline the catalog knows, by its class's from_pretrained (patched here and in
    dry_run_hub.py: a model from its config, a tokenizer's stand-in), the dtype asked for given to models."""
    import diffusers
    import torch
    import transformers
    owner = getattr(diffusers if library == "diffusers" else transformers, class_name)
    model = isinstance(owner, type) and issubclass(owner, torch.nn.Module)
    return owner.from_pretrained(name, subfolder=subfolder, **({"torch_dtype": dtype} if model and dtype is not None else {}))


def _pipeline(cls: Any, name: Any, kwargs: Dict[str, Any], error: BaseException) -> Any:
    """A whole pipeline from the catalog's model_index: each component built as its class would, the
    ones the catalog leaves out (the safety checker, its feature extractor, an image encoder) None,
    as scripts that train pass."""
    import diffusers
    index = hub_config(name, "model_index.json")
    if index is None:
        raise unknown_checkpoint(name, None) from error
    target = cls if cls is not diffusers.DiffusionPipeline else getattr(diffusers, index["_class_name"])
    parameters = inspect.signature(target.__init__).parameters
    components = {key: _component(value[0], value[1], name, key, kwargs.get("torch_dtype")) for key, value in index.items() if not key.startswith("_") and key in parameters}
    for key, parameter in parameters.items():
        if key != "self" and key not in components and parameter.default is inspect.Parameter.empty:
            components[key] = None
    if "requires_safety_checker" in parameters:
        components["requires_safety_checker"] = False
    return target(**components)


def after_import_patches() -> Dict[str, Callable[[Any], None]]:
    """The modules to patch as the script imports them (harness/dry_run_frameworks.py's AfterImport)."""
    return {
        "diffusers.models.modeling_utils": _patch_models,
        "diffusers.schedulers.scheduling_utils": lambda module: on_missing(module.SchedulerMixin, _scheduler),
        "diffusers.pipelines.pipeline_utils": lambda module: on_missing(module.DiffusionPipeline, _pipeline),
    }
