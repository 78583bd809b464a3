"""mmengine glue that knows no model or task: the checkpoint I/O policy, mixed precision on CPU and
layer-wise learning-rate decay. Backbones, recipes and tasks build on it; it imports none of them."""
