# MAE ViT-B/16 on ImageNet-1k for 1600 epochs (He et al., CVPR 2022; facebookresearch/mae PRETRAIN.md):
# mask ratio 0.75, decoder 8 blocks x 512 wide x 16 heads, normalised-pixel loss, fixed sin-cos position
# embeddings, AdamW (0.9, 0.95) with base lr 1.5e-4 x 4096 / 256 = 2.4e-3 at batch 4096 (8 GPUs x 512),
# weight decay 0.05, 40 warmup epochs, cosine to 0, RandomResizedCrop (0.2, 1) + flip.
# Fine-tuned: 83.6 top-1 (MAE*, thesis Table 6.9). Its backbone.pth is the teacher of
# dmae_vit_tiny12h_in1k_400e.py (the official mae_pretrain_vit_base.pth works as well).
_base_ = ['../_base_/imagenet_runtime.py', '../_base_/datasets/imagenet_mae.py']

max_epochs = 1600
model = dict(
    type='MAE',
    backbone=dict(type='vitbench.VisionTransformer', arch='deit_base_patch16_224'),
                   # ViT-B/16 as MAE's (class-token position row, no LayerScale)
    mask_ratio=0.75,
    decoder=dict(embed_dim=512, depth=8, num_heads=16),
    norm_pix=True,
    data_preprocessor=dict(type='ClsDataPreprocessor'))

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=2.4e-3, betas=(0.9, 0.95), weight_decay=0.05),
    constructor='LayerDecayOptimWrapperConstructor',  # rate 1.0: no weight decay on norms and biases
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-4, by_epoch=True, begin=0, end=40, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=0., by_epoch=True, begin=40, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=50)
auto_scale_lr = dict(base_batch_size=4096)
custom_hooks = [dict(type='BackboneExportHook'), dict(type='MAEVisualizationHook')]

experiment = dict(task='pretrain', dataset='imagenet', backbone='deit_base_patch16_224',
                  pretrain=dict(recipe='mae', epochs=max_epochs, checkpoint=None))
