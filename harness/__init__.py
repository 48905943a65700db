"""Python side of GPU Estimator: measures what the TypeScript analyzer estimates.

`harness.layer_table.layer_table(model, make_input, name)` runs a model and returns its layer
table (schema/layer-table.schema.json; rules in docs/layer-table.md).
"""
from .layer_table import LayerTableError, is_layer_module, layer_modules, layer_table, make_input_factory

__all__ = ["LayerTableError", "is_layer_module", "layer_modules", "layer_table", "make_input_factory"]
