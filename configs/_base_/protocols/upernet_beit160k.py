# Protocol upernet_beit160k: UperNet on ADE20k as BEiT and MAE ran it (MAE, He et al. 2022, §A.4: "UperNet ...
# following the code of BEiT"; microsoft/unilm beit/semantic_segmentation
# configs/beit/upernet/upernet_beit_base_12_512_slide_160k_ade20k_pt2ft.py), the protocol of MAE ViT-B's 48.1 in
# thesis Table 6.12 and of MAE-lite's ADE20k runs:
# - AdamW lr 1e-4, betas (0.9, 0.999), weight decay 0.05, layer-wise lr decay 0.65; no weight decay on norms,
#   biases, LayerScale, position embedding and class token, as BEiT's and MAE's code (1-D parameters and
#   `no_weight_decay()`). mmseg's reimplementation decays the last two: its check compares the full names
#   ('backbone.pos_embed') with ('pos_embed', 'cls_token') (mmseg/engine/optimizers/
#   layer_decay_optimizer_constructor.py); the official code is followed here;
# - 1,500 linear warm-up iterations, then poly (power 1) to 0 at 160k; batch 16 (8 GPUs x 2);
# - 512 x 512 crops, single-scale test with a 512 sliding window (stride 341);
# - head rule (`heads`, for every run, --backbone or not; downstream/head_rule.py): UperNet channels = the
#   backbone's width, 'embed_dim': BEiT's 768 for ViT-B (upernet_beit_base_12_512_slide_160k_ade20k_pt2ft.py;
#   mmseg's MAE reproduction, configs/mae/mae-base_upernet_8xb2-amp-160k_ade20k-512x512.py, the same) and 1024
#   for ViT-L (upernet_beit_large_24_512_slide_160k_ade20k_pt2ft.py: channels=1024); MAE-lite's ViT-Tiny 192;
#   FCN auxiliary head 256 channels for every size (BEiT's upernet_beit.py base), weight 0.4.
# A config derived from it sets its backbone, the widths the rule gives it and its checkpoint.
_base_ = ['../models/upernet_vit.py', '../datasets/ade20k.py', '../schedules/seg_160k.py', '../seg_runtime.py']

model = dict(decode_head=dict(channels=768))

experiment = dict(protocol=dict(name='upernet_beit160k', settings=[
    'optim_wrapper', 'param_scheduler', 'train_cfg.max_iters', 'train_dataloader.batch_size', 'crop_size',
    'model.test_cfg'], heads=dict(decode_head='embed_dim', auxiliary_head=256)))
