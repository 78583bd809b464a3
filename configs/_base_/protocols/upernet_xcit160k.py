# Protocol upernet_xcit160k: UperNet on ADE20k as the DeiT III and PatchConvNet thesis chapters ran it (Touvron,
# PhD thesis 2022, §5.3.3 and §6.3.5.2, Tables 5.3 / 6.12: "Our UperNet implementation is based on the XCiT
# repository"; "the same schedule as in Swin: 160k iterations"). Values from facebookresearch/xcit
# semantic_segmentation/configs/xcit/upernet/upernet_xcit_small_12_p16_160k_ade20k.py and its bases:
# - AdamW lr 6e-5, betas (0.9, 0.999), weight decay 0.01, none on position embeddings and norms (XCiT's
#   custom_keys; biases and LayerScale decay, as there), no layer-wise decay;
# - 1,500 linear warm-up iterations from 1e-6 x lr, then poly (power 1) to 0 at 160k; batch 16 (8 GPUs x 2);
# - 512 x 512 crops, single-scale test on the whole image (test_cfg mode='whole', short side 512);
# - UperNet head 512 channels, 384 for ViT-S and 192 for ViT-T (thesis §6.3.5.2; XCiT keeps 512 for all), FCN
#   auxiliary head of 256 channels, weight 0.4.
# A config derived from it sets its backbone, the head width for its size and its checkpoint.
_base_ = ['../models/upernet_vit.py', '../datasets/ade20k.py', '../schedules/seg_160k.py', '../seg_runtime.py']

optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=6e-5, betas=(0.9, 0.999), weight_decay=0.01),
    paramwise_cfg=dict(custom_keys={'pos_embed': dict(decay_mult=0.), 'norm': dict(decay_mult=0.)}))
model = dict(test_cfg=dict(_delete_=True, mode='whole'), decode_head=dict(channels=512))

experiment = dict(protocol=dict(name='upernet_xcit160k', settings=[
    'optim_wrapper', 'param_scheduler', 'train_cfg.max_iters', 'train_dataloader.batch_size', 'crop_size',
    'model.test_cfg', 'model.decode_head.channels', 'model.auxiliary_head.channels']))
