"""The part of Lightning the truths need: LightningModule is an nn.Module (as it is in Lightning), so
PyTorch counts a LightningModule's parameters exactly as Lightning would; save_hyperparameters fills
self.hparams from the caller's __init__ arguments. Nothing here trains."""
import inspect

import torch.nn as nn


class AttributeDict(dict):
    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError as error:
            raise AttributeError(key) from error

    def __setattr__(self, key, value):
        self[key] = value


class _HParamsMixin:
    def save_hyperparameters(self, *args, **kwargs):
        frame = inspect.currentframe().f_back
        info = inspect.getargvalues(frame)
        values = {name: info.locals[name] for name in info.args if name != "self"}
        if info.keywords:
            values.update(info.locals[info.keywords])
        object.__setattr__(self, "_hparams_store", AttributeDict(values))

    @property
    def hparams(self):
        return self.__dict__.get("_hparams_store", AttributeDict())


class LightningModule(_HParamsMixin, nn.Module):
    pass


class LightningDataModule(_HParamsMixin):
    def __init__(self, *args, **kwargs):
        pass


class Trainer:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("the truths stub of Lightning does not train")


def seed_everything(seed=None, workers=False):
    return seed
