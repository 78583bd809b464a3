# Protocol upernet_xcit160k: UperNet on ADE20k as the DeiT III and PatchConvNet thesis chapters ran it (Touvron,
# PhD thesis 2022, §5.3.3 and §6.3.5.2, Tables 5.3 / 6.12: "Our UperNet implementation is based on the XCiT
# repository"; "the same schedule as in Swin: 160k iterations"). Values from facebookresearch/xcit
# semantic_segmentation/configs/xcit/upernet/upernet_xcit_small_12_p16_160k_ade20k.py and its bases:
# - AdamW lr 6e-5, betas (0.9, 0.999), weight decay 0.01, none on parameters named `norm` (XCiT's custom_keys;
#   biases, LayerScale and the class token decay, as there), no layer-wise decay;
# - 1,500 linear warm-up iterations from 1e-6 x lr, then poly (power 1) to 0 at 160k; batch 16 (8 GPUs x 2);
# - 512 x 512 crops, single-scale test on the whole image (test_cfg mode='whole', short side 512);
# - head rule (`heads`, for every run, --backbone or not; downstream/head_rule.py): UperNet channels 'by_width', the
#   thesis' "for small and tiny models we set it to the size of their working dimension" (§6.3.5.2): 512 from
#   width 768 (ViT-B 512, ViT-L 512), 384 from 384 (ViT-S, CaiT-S24: 384), else 192 (ViT-T); PatchConvNet 512 from
#   S up, its family record's rule (§5.3.3, Table 5.3's parameter counts: S60 and B120 with 512); a timm
#   hierarchical model by its last map (Swin-T / ConvNeXt-T, 768: 512, as XCiT's and Swin's UperNet configs, which
#   keep 512 for all). FCN auxiliary head 256 channels (xcit's upernet base config), weight 0.4.
# Deliberate difference: no weight decay on `pos_embed`. XCiT's key is Swin's `absolute_pos_embed`, which names no
# parameter of a plain ViT; its comment says "no weight decay for position embedding". Audited value by value
# from the built optimiser and model: tests/protocol_audit/segmentation.yaml.
# A config derived from it sets its backbone, the widths the rule gives it and its checkpoint.
_base_ = ['../models/upernet_vit.py', '../datasets/ade20k.py', '../schedules/seg_160k.py', '../seg_runtime.py']

optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=6e-5, betas=(0.9, 0.999), weight_decay=0.01),
    paramwise_cfg=dict(custom_keys={'pos_embed': dict(decay_mult=0.), 'norm': dict(decay_mult=0.)}))
model = dict(test_cfg=dict(_delete_=True, mode='whole'), decode_head=dict(channels=512))

experiment = dict(protocol=dict(name='upernet_xcit160k', settings=[
    'optim_wrapper', 'param_scheduler', 'train_cfg.max_iters', 'train_dataloader.batch_size', 'crop_size',
    'model.test_cfg'], heads=dict(decode_head='by_width', auxiliary_head=256)))
