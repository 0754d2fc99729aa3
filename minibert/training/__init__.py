"""The training layer: the LightningModules, the data module, metrics, callbacks, loggers, checkpoints,
preemption and the CLI that puts them together (`python -m minibert fit ...`)."""
