# MAE-Tiny (MAE-lite, Wang et al., ICML 2023, §4; official mae_lite_exp.py): the 12-head ViT-Tiny encoder,
# 400 epochs, mask ratio 0.75, decoder 1 block x 96 wide x 3 heads, normalised-pixel loss, AdamW (0.9, 0.95)
# 2.4e-3 at batch 4096 (1.5e-4 x 4096 / 256), weight decay 0.05, 40 warmup epochs, cosine to 0,
# RandomResizedCrop scale (0.08, 1) (MAE uses 0.2) + flip. Fine-tuned with
# configs/finetune/mae_lite_vit_tiny12h_ft_300e.py: 78.0 top-1 (MAE-lite Table 1).
_base_ = ['./mae_vit_base_in1k_1600e.py']

max_epochs = 400
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='vit_tiny12h_patch16_224'),
             decoder=dict(embed_dim=96, depth=1, num_heads=3))
train_dataloader = dict(dataset=dict(pipeline=[
    dict(type='LoadImage'),
    dict(type='RandomResizedCrop', size=224, scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='PackInputs'),
]))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-4, by_epoch=True, begin=0, end=40, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=0., by_epoch=True, begin=40, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs, val_interval=20)
experiment = dict(backbone='vit_tiny12h_patch16_224', pretrain=dict(recipe='mae', epochs=max_epochs))
