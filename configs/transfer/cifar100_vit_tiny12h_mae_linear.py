# CIFAR-100, MAE-Tiny, linear probe: the frozen encoder's pooled features -> BatchNorm without affine parameters
# (MAE's probe) -> a new linear head, the only trained layer. Same SGD schedule as cifar100_vit_tiny12h_mae.py
# (layer decay has no effect: only the head trains). No published transfer number; MAE-Tiny's ImageNet linear
# probe is 23.4 (MAE-lite §4), far below fine-tuning: its higher layers are weak.
_base_ = ['./cifar100_vit_tiny12h_mae.py']

model = dict(trainable='linear', probe_norm=True)
