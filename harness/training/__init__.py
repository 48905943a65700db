"""Training pipeline of GPU Estimator's learned estimators: features (features.py, the same as
src/core/features/features.ts), data (data.py), the exported training table (table.py), ensembles
(ensemble.py), ONNX export (export.py) and the command line (cli.py: `python3 -m harness.training
export|train|export-onnx|vectors`). See README.md."""
