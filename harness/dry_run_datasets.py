"""Hugging Face datasets in a dry run, with no network: `load_dataset` / `load_from_disk` of data that is
not here give stand-ins that follow `map`, `rename_column`, `remove_columns`, splits, formats and
transforms (`with_transform`, `set_transform`) by column names; a hub dataset of images has blank RGB
images of the analysed size. The loaders over them give the batch the script's own transform and
collate function make, else dict batches (`input_ids`, `attention_mask`, `labels`) of the analysed shape.

The harness (harness/dry_run.py) installs these as the script imports datasets, and asks
`batch_from` for a loader's batch.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterable, List, Optional

from harness.dry_run_hub import analysed_input, image_size, is_missing, sequence_length

#: Rows of a dataset stand-in: what `len()` says (the loaders end the run after their steps anyway).
DATASET_ROWS = 10000


#: Columns that hold images in the hub's image datasets (`image`, `img`, a `pixel_values` kept as is).
_IMAGE_COLUMNS = ("image", "images", "img", "pixel_values", "picture", "photo")


#: Columns that hold class indices (`label`, `labels`: a ClassLabel feature).
_LABEL_COLUMNS = ("label", "labels", "target", "targets", "class", "category")


def _is_image_column(key: Any) -> bool:
    return isinstance(key, str) and (key.lower() in _IMAGE_COLUMNS or key.lower().endswith("_image"))


def _column_value(key: Any) -> Any:
    """One row's value of a column: a blank RGB image, a class index, or a short text."""
    if _is_image_column(key):
        from PIL import Image
        return Image.new("RGB", image_size())
    if isinstance(key, str) and key.lower() in _LABEL_COLUMNS:
        return 0
    return "a b c"


class FeatureStandIn:
    """`dataset.features[column]`: a ClassLabel's names for the classes (two), whatever the column."""

    names = ["class_0", "class_1"]
    num_classes = 2

    def int2str(self, index: Any) -> Any:
        return [self.names[int(i) % 2] for i in index] if isinstance(index, (list, tuple)) else self.names[int(index) % 2]

    def str2int(self, name: Any) -> Any:
        return [0 for _ in name] if isinstance(name, (list, tuple)) else 0


class _Features(dict):
    """The stand-in's `features`: the columns by name, and any other asked for (`features["labels"].names`)."""

    def __missing__(self, key: Any) -> FeatureStandIn:
        return FeatureStandIn()


class _AnyColumn(dict):
    """What a `map` function or a transform reads from the stand-in: any column, as `_column_value` gives it."""

    def __init__(self, rows: Optional[int]) -> None:
        super().__init__()
        self.rows = rows

    def __missing__(self, key: Any) -> Any:
        return [_column_value(key)] * self.rows if self.rows else _column_value(key)


def _default_columns() -> Any:
    """A dataset the script names, not here: an image and its caption or label where the data is images, else a text and its label."""
    return ("image", "text", "label") if len(analysed_input()) == 3 else ("text", "label")


_SPLITS = ("train", "validation", "valid", "dev", "test")


class DatasetStandIn:
    """A dataset the script loads from the hub or files not here: columns by name, rows by count."""

    def __init__(self, columns: Optional[Iterable[str]] = None, transform: Optional[Callable[..., Any]] = None) -> None:
        self.column_names = list(dict.fromkeys(_default_columns() if columns is None else columns))
        self.features: Dict[str, Any] = _Features({name: FeatureStandIn() for name in self.column_names})
        self.num_rows = DATASET_ROWS
        #: `with_transform` / `set_transform`: applied to each batch of rows as they are read.
        self.transform = transform

    def rows(self, count: int) -> List[Any]:
        """What a loader's collate function gets: rows the transform made (one made, repeated), or rows of any column."""
        if self.transform is None:
            return [_AnyColumn(None) for _ in range(count)]
        # A batch of one row with the dataset's columns, as the transform gets it; what it returns is the row.
        batch = _AnyColumn(1)
        batch.update({name: [_column_value(name)] for name in self.column_names})
        made = self.transform(batch)
        return [{key: value[0] for key, value in made.items() if not isinstance(value, str)}] * count

    def with_transform(self, transform: Optional[Callable[..., Any]] = None, *args: Any, **kwargs: Any) -> "DatasetStandIn":
        return DatasetStandIn(self.column_names, transform)

    def set_transform(self, transform: Optional[Callable[..., Any]] = None, *args: Any, **kwargs: Any) -> None:
        self.transform = transform

    def __len__(self) -> int:
        return DATASET_ROWS

    def __iter__(self) -> Any:
        return iter(())

    def __getitem__(self, key: Any) -> Any:
        if key in _SPLITS:
            return self  # a saved dataset may be one split or several: either reads as this
        if isinstance(key, str):
            return ["a b c"] * 8  # a column
        raise IndexError("the dry run reads no data")

    def with_columns(self, columns: Iterable[str]) -> "DatasetStandIn":
        return DatasetStandIn(columns)

    def map(self, function: Optional[Callable[..., Any]] = None, batched: bool = False, remove_columns: Any = None, **kwargs: Any) -> "DatasetStandIn":
        columns = list(self.column_names)
        if function is not None:
            try:
                out = function(_AnyColumn(2 if batched else None), *([0] if kwargs.get("with_indices") else []))
                if hasattr(out, "keys"):
                    columns += [str(k) for k in out.keys()]
            except Exception:  # the script's function on texts it did not expect: its columns are unknown
                columns += ["input_ids", "attention_mask"]
        removed = [remove_columns] if isinstance(remove_columns, str) else list(remove_columns or [])
        return DatasetStandIn(c for c in columns if c not in removed)

    def rename_column(self, old: str, new: str) -> "DatasetStandIn":
        return DatasetStandIn(new if c == old else c for c in self.column_names)

    def rename_columns(self, mapping: Dict[str, str]) -> "DatasetStandIn":
        return DatasetStandIn(mapping.get(c, c) for c in self.column_names)

    def remove_columns(self, columns: Any) -> "DatasetStandIn":
        removed = [columns] if isinstance(columns, str) else list(columns)
        return DatasetStandIn(c for c in self.column_names if c not in removed)

    def select_columns(self, columns: Any) -> "DatasetStandIn":
        return DatasetStandIn([columns] if isinstance(columns, str) else columns)

    def train_test_split(self, *args: Any, **kwargs: Any) -> "DatasetDictStandIn":
        return DatasetDictStandIn({"train": self, "test": self})

    def set_format(self, *args: Any, **kwargs: Any) -> None:
        return None

    def same(self, *args: Any, **kwargs: Any) -> "DatasetStandIn":
        return self

    filter = shuffle = select = sort = flatten = with_format = cast = cast_column = take = skip = flatten_indices = class_encode_column = same


class DatasetDictStandIn(dict):
    """`load_dataset(...)` without a split: each split the script asks for is a stand-in."""

    def __missing__(self, key: Any) -> DatasetStandIn:
        return DatasetStandIn()

    def _each(self, method: str, *args: Any, **kwargs: Any) -> "DatasetDictStandIn":
        return DatasetDictStandIn({key: getattr(value, method)(*args, **kwargs) for key, value in self.items()})

    def map(self, *args: Any, **kwargs: Any) -> "DatasetDictStandIn":
        return self._each("map", *args, **kwargs)

    def with_transform(self, *args: Any, **kwargs: Any) -> "DatasetDictStandIn":
        return self._each("with_transform", *args, **kwargs)

    def set_transform(self, *args: Any, **kwargs: Any) -> None:
        for value in self.values():
            value.set_transform(*args, **kwargs)

    def rename_column(self, *args: Any, **kwargs: Any) -> "DatasetDictStandIn":
        return self._each("rename_column", *args, **kwargs)

    def rename_columns(self, *args: Any, **kwargs: Any) -> "DatasetDictStandIn":
        return self._each("rename_columns", *args, **kwargs)

    def remove_columns(self, *args: Any, **kwargs: Any) -> "DatasetDictStandIn":
        return self._each("remove_columns", *args, **kwargs)

    def select_columns(self, *args: Any, **kwargs: Any) -> "DatasetDictStandIn":
        return self._each("select_columns", *args, **kwargs)

    def filter(self, *args: Any, **kwargs: Any) -> "DatasetDictStandIn":
        return self

    shuffle = with_format = cast = cast_column = flatten = class_encode_column = filter

    def set_format(self, *args: Any, **kwargs: Any) -> None:
        return None

    @property
    def column_names(self) -> Dict[str, List[str]]:
        return {key: value.column_names for key, value in self.items()}


def _patch_load_dataset(module: Any) -> None:
    original = module.load_dataset

    def load_dataset(path: Any = None, *args: Any, split: Any = None, **kwargs: Any) -> Any:
        try:
            return original(path, *args, split=split, **kwargs)
        except BaseException as error:
            if not is_missing(error) and type(error).__name__ not in ("FileNotFoundError", "DatasetGenerationError", "EmptyDatasetError"):
                raise
        return DatasetStandIn() if split is not None else DatasetDictStandIn({"train": DatasetStandIn(), "validation": DatasetStandIn(), "test": DatasetStandIn()})

    module.load_dataset = load_dataset
    original_from_disk = getattr(module, "load_from_disk", None)

    def load_from_disk(path: Any, *args: Any, **kwargs: Any) -> Any:
        # A dataset the script saved with save_to_disk (tokenized beforehand): its splits are not known here.
        if original_from_disk is not None and os.path.exists(os.fspath(path)):
            return original_from_disk(path, *args, **kwargs)
        return DatasetStandIn(("input_ids", "attention_mask", "labels"))

    module.load_from_disk = load_from_disk


def batch_from(dataset: Any, collate_fn: Any, spec: Dict[str, Any], batch_size: int, make_batch: Callable[[Dict[str, Any], int], Any]) -> Any:
    """A dict batch for a loader over a dataset stand-in, or whose collate function is one of
    transformers' (its batches are dicts): the spec's tensors under the names models take."""
    import torch
    if isinstance(dataset, DatasetDictStandIn):  # given whole: its training split
        dataset = dataset["train"]
    from_transformers = str(getattr(collate_fn, "__module__", "") or getattr(type(collate_fn), "__module__", "")).startswith("transformers.")
    if isinstance(dataset, DatasetStandIn) and (collate_fn is not None and not from_transformers or dataset.transform is not None):
        # The script's own collate function (tokenizing texts, stacking the images its transform made):
        # what it makes of rows is the batch.
        try:
            rows = dataset.rows(batch_size)
            made = collate_fn(rows) if collate_fn is not None else torch.utils.data.default_collate(rows)
        except Exception:
            made = None
        if hasattr(made, "keys") and all(isinstance(value, torch.Tensor) for value in made.values()):
            return dict(made)
    if not isinstance(dataset, DatasetStandIn):
        if not from_transformers:
            return None
        dataset = DatasetStandIn(("input_ids", "attention_mask", "labels"))
    tensors = spec.get("tensors") or []
    ids, labels = make_batch({**spec, "tensors": tensors[:2] if len(tensors) > 1 else tensors, "kind": None}, batch_size) if len(tensors) > 1 else (make_batch(spec, batch_size), None)
    if ids.dtype.is_floating_point:  # no token model found: ids of the analysed length all the same
        ids = torch.zeros((batch_size, sequence_length()), dtype=torch.long)
    batch: Dict[str, Any] = {"input_ids": ids.long(), "attention_mask": torch.ones(ids.shape, dtype=torch.long)}
    columns = set(dataset.column_names)
    if "token_type_ids" in columns:
        batch["token_type_ids"] = torch.zeros(ids.shape, dtype=torch.long)
    if labels is not None:
        # transformers' collators give `labels` (they rename a `label` column); the default collate keeps
        # the dataset's own name (imdb's and glue's `label`).
        batch["labels" if from_transformers else next((name for name in ("labels", "label") if name in columns), "labels")] = labels
    return batch


def after_import_patches() -> Dict[str, Callable[[Any], None]]:
    """The modules to patch as the script imports them (harness/dry_run_frameworks.py's AfterImport)."""
    return {"datasets.load": _patch_load_dataset}
