"""mmengine glue that knows no model or task: the checkpoint I/O policy, mixed precision on CPU,
layer-wise learning-rate decay and the meter of what a run costs. Backbones, recipes and tasks build on it; it imports none of them."""
