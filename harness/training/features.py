"""The feature vector of the learned estimators, from a layer table and the training set-up.

The same definition as src/core/features/features.ts (both read featureDefinition.json);
test/vectors/features/*.json are checked by pytest and mocha. Raw values: the exported ONNX graph
applies the transforms and scaling itself, so TypeScript feeds these numbers unchanged.

Functional rows (`torch.cat` / `torch.stack` calls, row type "torch.<function>") feed only the
analytical estimate and its state/activation parts, which take every row, and the two features of
their own (version 2: how many, and their output elements x B). All other features are computed
from the table without them (totals.activations already leaves them out).
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from ..schema_check import is_concatenation_row, is_functional_row
from .analytical import analytical_bytes
from .definitions import analytical_model, feature_definition, feature_names


def hidden_activation(types: Sequence[str]) -> Optional[str]:
    """The most frequent activation row type outside the softmax family; ties go to the one called first."""
    definition = feature_definition()
    excluded = set(definition["hiddenActivationExcluded"])
    traits = analytical_model()["layerTraits"]
    counts: Dict[str, int] = {}
    for layer_type in types:
        trait = traits.get(layer_type)
        if trait is None or trait["category"] != "activation" or layer_type in excluded:
            continue
        counts[layer_type] = counts.get(layer_type, 0) + 1
    best: Optional[str] = None
    for layer_type, count in counts.items():  # insertion order: first call first
        if best is None or count > counts[best]:
            best = layer_type
    return best


def _product(dims: Sequence[int]) -> int:
    result = 1
    for d in dims:
        result *= int(d)
    return result


def feature_record(table: Mapping[str, Any], setup: Mapping[str, Any]) -> Dict[str, float]:
    """The features by name, in definition order. `setup` has batchSize, optimizer, precision."""
    definition = feature_definition()
    model = analytical_model()
    traits = model["layerTraits"]
    batch = int(setup["batchSize"])
    optimizer = setup.get("optimizer") or "adam"
    precision = setup.get("precision") or "fp32"
    f: Dict[str, float] = {name: 0 for name in feature_names()}
    rows = [row for row in table["rows"] if row["type"] != "Parameter" and not is_functional_row(row)]
    totals = table["totals"]
    f["batch_size"] = batch
    f["params"] = int(totals["params"])
    f["activations"] = int(totals["activations"])
    f["activations_x_batch"] = int(totals["activations"]) * batch
    f["layer_calls"] = len(rows)
    depth_categories = set(definition["depthCategories"])
    count_feature = definition["countCategories"]
    largest_activations = 0
    largest_params = 0
    # Per-sample activations by group first (whole numbers), then times the batch size.
    group_activations: Dict[str, int] = {}
    for row in rows:
        trait = traits.get(row["type"])
        category = trait["category"] if trait else None
        if category in depth_categories:
            f["depth"] += 1
        count = count_feature.get(category, "count_other") if category else "count_other"
        f[count] += 1
        group = count[len("count_"):]
        group_activations[group] = group_activations.get(group, 0) + int(row.get("activations") or 0)
        largest_activations = max(largest_activations, int(row.get("activations") or 0))
        largest_params = max(largest_params, int(row.get("params") or 0))
    for group, activations in group_activations.items():
        f[f"activations_x_batch_{group}"] = activations * batch
    activation = hidden_activation([row["type"] for row in rows])
    angle = definition["activationAngles"].get(activation) if activation else None
    f["activation_sin"] = angle["sin"] if angle else 0
    f["activation_cos"] = angle["cos"] if angle else 0
    shape = table.get("inputShape")
    f["input_elements"] = _product(shape) if shape else 0
    f["input_spatial"] = _product(shape[1:]) if shape and len(shape) >= 2 else 0
    f["largest_activations_x_batch"] = largest_activations * batch
    f["largest_params"] = largest_params
    parts = analytical_bytes(table, batch, optimizer, precision)  # every row, functional ones too
    mib = model["bytesPerMiB"]
    f["analytical_mib"] = (parts.state_bytes + parts.activation_bytes) / mib + model["runtimeOverheadMiB"]
    f["analytical_state_mib"] = parts.state_bytes / mib
    f["analytical_activations_mib"] = parts.activation_bytes / mib
    f["optimizer_state_copies"] = model["optimizerCopies"][optimizer]
    f["weight_bytes"] = model["precisionBytes"][precision]["weights"]
    f["activation_bytes"] = model["precisionBytes"][precision]["activations"]
    # The concatenations alone: the ensembles were trained on tables whose only functional rows they are.
    functional = [row for row in table["rows"] if is_concatenation_row(row)]
    f["functional_calls"] = len(functional)
    f["functional_activations_x_batch"] = sum(int(row.get("activations") or 0) for row in functional) * batch
    return {name: float(value) for name, value in f.items()}


def feature_vector(table: Mapping[str, Any], setup: Mapping[str, Any]) -> List[float]:
    record = feature_record(table, setup)
    return [record[name] for name in feature_names()]
