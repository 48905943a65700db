from _lightning_base import LightningModule, LightningDataModule, Trainer, seed_everything  # noqa: F401
