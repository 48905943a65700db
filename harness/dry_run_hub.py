"""Hugging Face in a dry run, with no network: what the script names by hub id is made here.

- Models: `from_pretrained("bert-base-uncased", ...)` builds the model from its config, a
  `config.json` that is here or the catalog's (the spec's `hubConfigs`), in the dtype asked for, and
  never reads weights: they change values, not memory. A checkpoint with neither stops with its
  name. Loading in 4 or 8 bits (bitsandbytes) stops with why: its kernels need a GPU.
- Tokenizers: a stand-in with the checkpoint's vocabulary size, giving ids of the length asked
  (`max_length`) or of the analysed sequence; image processors, pixel values of the model's size.
- Datasets: harness/dry_run_datasets.py; diffusers' models and schedulers: harness/dry_run_diffusers.py.

The harness (harness/dry_run.py) installs these as the script imports transformers.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterable, List, Optional

from harness import dry_run_frameworks
from harness.dry_run_frameworks import NotDryRunnable

#: What the stand-in tokenizer gives where the script asks for no length.
DEFAULT_TOKENS = 128


def offline_environment() -> None:
    """The libraries' own offline switches: a clean "not cached" instead of a refused connection."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[name] = "1"


def current_spec() -> Dict[str, Any]:
    """The spec of the run in progress (harness/dry_run.py sets dry_run_frameworks.current_run)."""
    run = dry_run_frameworks.current_run()
    return run.spec if run is not None else {}


def hub_config(name: Any, subfolder: Any = None) -> Optional[Dict[str, Any]]:
    """The catalog's config of a checkpoint, or of one of a pipeline's components (`repo/unet`)."""
    configs = current_spec().get("hubConfigs") or {}
    if not isinstance(name, (str, os.PathLike)):
        return None
    key = str(name).rstrip("/")
    return configs.get(f"{key}/{str(subfolder).strip('/')}" if subfolder else key)


def analysed_input() -> List[int]:
    """The per-sample shape of the run's input as the static analysis found it (the spec's first tensor); [] where none."""
    tensors = current_spec().get("tensors") or []
    return list(tensors[0].get("shape") or []) if tensors else []


def sequence_length() -> int:
    shape = analysed_input()
    return int(shape[-1]) if shape else DEFAULT_TOKENS


def image_size() -> Any:
    """(width, height) of the stand-in's images: the analysed image's, else 512 x 512 (the script's transforms resize it anyway)."""
    shape = analysed_input()
    return (int(shape[-1]), int(shape[-2])) if len(shape) == 3 else (512, 512)


def is_missing(error: BaseException) -> bool:
    """An error from_pretrained / load_dataset raise when the files are neither here nor cached."""
    return isinstance(error, (OSError, ValueError, ConnectionError)) or type(error).__name__ in ("LocalEntryNotFoundError", "HFValidationError", "DatasetNotFoundError", "OfflineModeIsEnabled")


# Models ---------------------------------------------------------------------------------------

#: from_pretrained's arguments about loading, not about the config.
_LOADING = {"torch_dtype", "dtype", "device_map", "quantization_config", "attn_implementation", "low_cpu_mem_usage", "trust_remote_code", "cache_dir", "revision", "token", "use_auth_token", "load_in_8bit", "load_in_4bit", "use_safetensors", "local_files_only", "force_download", "resume_download", "proxies", "output_loading_info", "subfolder", "variant", "offload_folder", "offload_state_dict", "max_memory", "use_flash_attention_2", "from_tf", "from_flax", "ignore_mismatched_sizes", "_fast_init", "state_dict", "mirror", "code_revision"}


#: What get_config_dict takes for itself; the rest it gives back (from_pretrained's own arguments among them).
_HUB_ARGUMENTS = {"cache_dir", "force_download", "resume_download", "proxies", "token", "use_auth_token", "local_files_only", "revision", "trust_remote_code", "subfolder", "_from_pipeline", "_from_auto", "_commit_hash", "gguf_file", "user_agent"}


def _patch_config(module: Any) -> None:
    """`PretrainedConfig.get_config_dict`: a checkpoint the catalog knows needs no config.json."""
    config_class = module.PretrainedConfig
    original = config_class.get_config_dict.__func__

    def get_config_dict(cls: Any, name: Any, **kwargs: Any) -> Any:
        try:
            return original(cls, name, **kwargs)
        except BaseException as error:
            known = hub_config(name, kwargs.get("subfolder"))
            if known is None or not is_missing(error):
                raise
            return dict(known), {k: v for k, v in kwargs.items() if k not in _HUB_ARGUMENTS}

    config_class.get_config_dict = classmethod(get_config_dict)


def _patch_models(module: Any) -> None:
    """`PreTrainedModel.from_pretrained`: built from the config where the weights are not here."""
    model_class = module.PreTrainedModel

    def from_pretrained(cls: Any, name: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("load_in_4bit") or kwargs.get("load_in_8bit") or kwargs.get("quantization_config") is not None:
            raise NotDryRunnable(f"the script loads {name} quantized (bitsandbytes), whose kernels need a GPU: a dry run on the CPU cannot build it; the static estimate covers 4-bit and 8-bit loading")
        # Never the weights, even where they are here: gigabytes read into the CPU's memory, for values
        # the dry run does not use. The config (here, or the catalog's) gives the same model.
        try:
            return _from_config(cls, name, kwargs)
        except NotDryRunnable:
            raise
        except BaseException as error:
            if not is_missing(error):
                raise
            raise unknown_checkpoint(name, kwargs.get("subfolder")) from error

    model_class.from_pretrained = classmethod(from_pretrained)


def unknown_checkpoint(name: Any, subfolder: Any = None) -> NotDryRunnable:
    config = f"{str(subfolder).strip('/')}/config.json" if subfolder else "config.json"
    what = f"{name} ({subfolder})" if subfolder else str(name)
    return NotDryRunnable(f"the dry run builds {what} from its {config}, which is not here (no network) and not in the catalog: download it once (huggingface-cli download {name} {config}) and run again")


def _patch_auto_models(module: Any) -> None:
    """`AutoModelFor...from_pretrained`: a config it cannot find is said as the model's, plainly."""
    factory = module._BaseAutoModelClass
    original = factory.from_pretrained.__func__

    def from_pretrained(cls: Any, name: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(cls, name, *args, **kwargs)
        except (OSError, ValueError) as error:
            if hub_config(name, kwargs.get("subfolder")) is not None or not is_missing(error) or os.path.isdir(os.fspath(name)):
                raise
            raise unknown_checkpoint(name, kwargs.get("subfolder")) from error

    factory.from_pretrained = classmethod(from_pretrained)


def _from_config(cls: Any, name: Any, kwargs: Dict[str, Any]) -> Any:
    import torch
    config = kwargs.pop("config", None)
    overrides = {k: v for k, v in kwargs.items() if k not in _LOADING}
    if config is None or isinstance(config, (str, os.PathLike)):
        where = {"subfolder": kwargs["subfolder"]} if kwargs.get("subfolder") else {}
        config = cls.config_class.from_pretrained(name, **where, **overrides)
    else:
        for key, value in overrides.items():
            setattr(config, key, value)
    attention = kwargs.get("attn_implementation") or ("flash_attention_2" if kwargs.get("use_flash_attention_2") else None) or getattr(config, "_attn_implementation_internal", None)
    if attention:
        # FlashAttention's kernels need a GPU; SDPA's fused kernels keep the same (no attention matrix).
        config._attn_implementation = "sdpa" if attention == "flash_attention_2" else attention
    dtype = kwargs.get("torch_dtype", kwargs.get("dtype"))
    if dtype == "auto":
        dtype = getattr(config, "torch_dtype", None)
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype, None)
    previous = torch.get_default_dtype()
    if isinstance(dtype, torch.dtype) and dtype.is_floating_point:
        torch.set_default_dtype(dtype)
    try:
        model = cls(config)
    finally:
        torch.set_default_dtype(previous)
    model.eval()  # as from_pretrained leaves it
    if kwargs.get("device_map") not in (None, "cpu", {"": "cpu"}):
        model.to("cuda")  # device_map="auto" on one GPU: all of it there
    return model


# Tokenizers -----------------------------------------------------------------------------------

class Encoding(dict):
    """What a tokenizer returns (transformers' BatchEncoding): a dict whose keys read as attributes too (`.input_ids`)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class TokenizerStandIn:
    """A tokenizer for a checkpoint whose files are not here: ids of the right length, no text."""

    padding_side = "right"
    truncation_side = "right"
    model_input_names = ["input_ids", "attention_mask"]

    def __init__(self, name: Any, subfolder: Any = None) -> None:
        config = hub_config(name, subfolder) or {}
        self.name_or_path = str(name)
        self.vocab_size = int(config.get("vocab_size") or 32000)
        self.model_max_length = int(config.get("model_max_length") or config.get("max_position_embeddings") or config.get("n_positions") or 4096)
        self.pad_token, self.eos_token, self.bos_token, self.unk_token = "<pad>", "</s>", "<s>", "<unk>"
        self.cls_token, self.sep_token, self.mask_token = "[CLS]", "[SEP]", "[MASK]"
        self.pad_token_id = config.get("pad_token_id") if isinstance(config.get("pad_token_id"), int) else 0
        self.eos_token_id = config.get("eos_token_id") if isinstance(config.get("eos_token_id"), int) else 2
        self.bos_token_id = config.get("bos_token_id") if isinstance(config.get("bos_token_id"), int) else 1
        self.unk_token_id, self.cls_token_id, self.sep_token_id, self.mask_token_id = 3, 1, 2, 4
        self.chat_template = None

    def __len__(self) -> int:
        return self.vocab_size

    def __call__(self, text: Any = None, text_pair: Any = None, max_length: Optional[int] = None, return_tensors: Optional[str] = None, **kwargs: Any) -> Dict[str, Any]:
        length = int(max_length) if max_length else sequence_length()
        batched = isinstance(text, (list, tuple))
        rows = len(text) if batched else 1
        ids = [[0] * length for _ in range(rows)]
        mask = [[1] * length for _ in range(rows)]
        if return_tensors == "pt":
            import torch
            return Encoding(input_ids=torch.zeros((rows, length), dtype=torch.long), attention_mask=torch.ones((rows, length), dtype=torch.long))
        return Encoding(input_ids=ids if batched else ids[0], attention_mask=mask if batched else mask[0])

    encode_plus = batch_encode_plus = __call__

    def encode(self, text: Any, *args: Any, **kwargs: Any) -> List[int]:
        return [0] * int(kwargs.get("max_length") or sequence_length())

    def decode(self, *args: Any, **kwargs: Any) -> str:
        return ""

    def batch_decode(self, sequences: Iterable[Any], *args: Any, **kwargs: Any) -> List[str]:
        return ["" for _ in sequences]

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        return [0 for _ in tokens] if isinstance(tokens, (list, tuple)) else 0

    def apply_chat_template(self, conversation: Any, tokenize: bool = True, **kwargs: Any) -> Any:
        return self.encode("") if tokenize else ""

    def add_special_tokens(self, *args: Any, **kwargs: Any) -> int:
        return 0

    def add_tokens(self, *args: Any, **kwargs: Any) -> int:
        return 0

    def pad(self, features: Any, return_tensors: Optional[str] = None, **kwargs: Any) -> Any:
        return features

    def save_pretrained(self, *args: Any, **kwargs: Any) -> None:
        return None

    def get_vocab(self) -> Dict[str, int]:
        return {}


def on_missing(owner: Any, fallback: Callable[[Any, Any, Dict[str, Any], BaseException], Any]) -> None:
    """`owner.from_pretrained`: the library's own, and `fallback(cls, name, kwargs, error)` where the files are not here."""
    original = owner.from_pretrained.__func__

    def from_pretrained(cls: Any, name: Any = None, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(cls, name, *args, **kwargs)
        except BaseException as error:
            if not is_missing(error):
                raise
            return fallback(cls, name, kwargs, error)

    owner.from_pretrained = classmethod(from_pretrained)


def _stand_in_where_missing(owner: Any, stand_in: Callable[[Any, Any], Any]) -> None:
    """`owner.from_pretrained`: `stand_in(name, subfolder)` where the files are not here (a tokenizer, an image processor)."""
    on_missing(owner, lambda cls, name, kwargs, error: stand_in(name, kwargs.get("subfolder")))


def _patch_tokenizers(module: Any) -> None:
    """Every tokenizer class's `from_pretrained` (they inherit PreTrainedTokenizerBase's)."""
    _stand_in_where_missing(module.PreTrainedTokenizerBase, TokenizerStandIn)


def _patch_auto_tokenizer(module: Any) -> None:
    _stand_in_where_missing(module.AutoTokenizer, TokenizerStandIn)


class ImageProcessorStandIn:
    """An image processor for a checkpoint whose files are not here: pixel values of the model's image size."""

    def __init__(self, name: Any, subfolder: Any = None) -> None:
        config = hub_config(name, subfolder) or {}
        side = config.get("image_size")
        side = int(side) if isinstance(side, int) else int(image_size()[0])
        self.size = {"height": side, "width": side}
        self.crop_size = dict(self.size)
        self.image_mean, self.image_std = [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]
        self.do_resize = self.do_normalize = self.do_rescale = True
        self.rescale_factor = 1 / 255

    def __call__(self, images: Any = None, return_tensors: Optional[str] = None, **kwargs: Any) -> Any:
        import torch
        count = len(images) if isinstance(images, (list, tuple)) else 1
        return Encoding(pixel_values=torch.zeros((count, 3, self.size["height"], self.size["width"])))

    preprocess = __call__

    def save_pretrained(self, *args: Any, **kwargs: Any) -> None:
        return None


def _patch_image_processors(module: Any) -> None:
    _stand_in_where_missing(module.ImageProcessingMixin, ImageProcessorStandIn)


def _patch_auto_image_processor(module: Any) -> None:
    _stand_in_where_missing(module.AutoImageProcessor, ImageProcessorStandIn)


def _patch_quantization_config(module: Any) -> None:
    """`BitsAndBytesConfig(...)` without bitsandbytes installed (a laptop preparing a cluster job): its
    version check is skipped, so the run reaches from_pretrained and says why it cannot go on."""
    config_class = getattr(module, "BitsAndBytesConfig", None)
    if config_class is None:
        return
    original = config_class.post_init

    def post_init(self: Any) -> None:
        try:
            original(self)
        except ImportError:
            pass
        except Exception as error:
            if type(error).__name__ != "PackageNotFoundError":
                raise

    config_class.post_init = post_init


#: bitsandbytes' blockwise quantization: one fp32 scale per this many elements of an 8-bit state.
QUANTIZATION_BLOCK = 256


def bitsandbytes_stand_in(states: int = 2, eight_bit: bool = True) -> Any:
    """bitsandbytes' optimizers as they hold their state on a GPU: each of `states` moments (AdamW's
    two, Lion's and RMSprop's one, AdEMAMix's three) one byte per element plus an fp32 scale per block
    (or, 32-bit, the parameter's size and dtype), updated in place by one kernel (its CUDA kernels cannot
    run on the CPU, so the memory is made here and the update is left out: it changes values only)."""
    import torch

    class BitsandbytesStandIn(torch.optim.Optimizer):
        def __init__(self, params: Any, lr: float = 1e-3, betas: Any = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0, **kwargs: Any) -> None:
            super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay})

        @torch.no_grad()
        def step(self, closure: Any = None) -> Any:
            loss = closure() if closure is not None else None
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        blocks = -(-p.numel() // QUANTIZATION_BLOCK)
                        state["step"] = 0
                        for moment in range(1, states + 1):
                            if not eight_bit:
                                state[f"state{moment}"] = torch.zeros_like(p)
                                continue
                            state[f"state{moment}"] = torch.zeros_like(p, dtype=torch.uint8)
                            state[f"absmax{moment}"] = torch.zeros((blocks,), dtype=torch.float32, device=p.device)
                    state["step"] += 1
            return loss

    return BitsandbytesStandIn


def _moments(name: str) -> int:
    """The 8-bit states an optimizer of this name keeps: Lion's and RMSprop's one, AdEMAMix's three, Adam's two."""
    lowered = name.lower()
    return 1 if "lion" in lowered or "rmsprop" in lowered else 3 if "ademamix" in lowered else 2


def _patch_trainer_optimizers(module: Any) -> None:
    """The Trainer's bitsandbytes optimizers (`optim="adamw_8bit"`, `"paged_adamw_32bit"`, `"lion_8bit"`,
    `"ademamix"`...): as bitsandbytes_stand_in holds them, 32-bit AdamW ones as torch's AdamW (paging moves pages
    only when the GPU runs out)."""
    import torch
    trainer_class = module.Trainer
    original = trainer_class.get_optimizer_cls_and_kwargs

    def get_optimizer_cls_and_kwargs(args: Any, model: Any = None) -> Any:
        name = str(getattr(args.optim, "value", args.optim))
        bitsandbytes = "bnb" in name or "8bit" in name or "paged" in name or "lion" in name or "ademamix" in name
        if not bitsandbytes or "galore" in name:
            return original(args, model)
        kwargs = {"lr": args.learning_rate, "betas": (args.adam_beta1, args.adam_beta2), "eps": args.adam_epsilon}
        if "8bit" in name:
            return bitsandbytes_stand_in(_moments(name)), kwargs
        # Lion's, RMSprop's and AdEMAMix's 32-bit states; 32-bit AdamW as torch's (the same two states).
        return (torch.optim.AdamW if _moments(name) == 2 else bitsandbytes_stand_in(_moments(name), eight_bit=False)), kwargs

    trainer_class.get_optimizer_cls_and_kwargs = staticmethod(get_optimizer_cls_and_kwargs)


def _patch_bitsandbytes_optimizers(module: Any) -> None:
    """`bnb.optim.AdamW8bit(...)` in the script's own loop: the same stand-ins."""
    import torch
    for name in dir(module):
        if name.endswith("8bit") and ("Adam" in name or "Lion" in name or "RMSprop" in name):
            setattr(module, name, bitsandbytes_stand_in(_moments(name)))
        elif name.startswith("Paged") and ("Adam" in name):
            setattr(module, name, torch.optim.AdamW)


def after_import_patches() -> Dict[str, Callable[[Any], None]]:
    """The modules to patch as the script imports them (harness/dry_run_frameworks.py's AfterImport)."""
    return {
        "transformers.configuration_utils": _patch_config,
        "transformers.modeling_utils": _patch_models,
        "transformers.models.auto.auto_factory": _patch_auto_models,
        "transformers.utils.quantization_config": _patch_quantization_config,
        "transformers.tokenization_utils_base": _patch_tokenizers,
        "transformers.models.auto.tokenization_auto": _patch_auto_tokenizer,
        "transformers.image_processing_base": _patch_image_processors,
        "transformers.models.auto.image_processing_auto": _patch_auto_image_processor,
        "transformers.trainer": _patch_trainer_optimizers,
        "bitsandbytes.optim": _patch_bitsandbytes_optimizers,
    }
