# Protocol upernet_beit160k: UperNet on ADE20k as MAE ran it "following the code of BEiT" (MAE, He et al. 2022,
# §A.4; MAE states no learning rate: it searched one per entry), with the values of the open reproduction of that
# run, open-mmlab/mmsegmentation configs/mae/mae-base_upernet_8xb2-amp-160k_ade20k-512x512.py (BEiT's code path:
# mmseg's LayerDecayOptimizerConstructor, a port of microsoft/unilm beit/semantic_segmentation/mmcv_custom/
# layer_decay_optimizer_constructor.py). Not BEiT's own upernet_beit_base_12_512_slide_160k_ade20k_pt2ft.py (lr
# 3e-5, layer decay 0.9: BEiT's intermediate-fine-tuned models). The protocol of MAE ViT-B's 48.1 in thesis
# Table 6.12. Audited value by value from the built optimiser and model: tests/protocol_audit/segmentation.yaml.
# - AdamW lr 1e-4, betas (0.9, 0.999), weight decay 0.05, layer-wise lr decay 0.65 (embeddings at 0.65^13, block
#   i at 0.65^(12-i), neck and heads at 1); no weight decay on 1-D parameters (norms, biases, LayerScale); the
#   position embedding and class token ARE decayed (`decay_embeddings`), as both codes do: their exemption
#   compares ('pos_embed', 'cls_token') with the `backbone.`-prefixed name and never matches;
# - 1,500 linear warm-up iterations from 1e-6 x lr, then poly (power 1) to 0 at 160k; batch 16 (8 GPUs x 2);
# - 512 x 512 crops, single-scale test with a 512 sliding window (stride 341: BEiT's upernet configs; a deliberate
#   difference from mmseg's MAE config, which slides at 256: BEiT's code is what MAE's number comes from);
# - head rule (`heads`, for every run, --backbone or not; downstream/head_rule.py): UperNet channels = the
#   backbone's width, 'embed_dim': 768 for ViT-B (mmseg's MAE config and BEiT's pt2ft alike) and 1024 for ViT-L
#   (upernet_beit_large_24_512_slide_160k_ade20k_pt2ft.py: channels=1024); FCN auxiliary head 256 channels for
#   every size (BEiT's upernet_beit.py base), weight 0.4.
# - BEiT's relative position bias in every block (`rel_pos_bias`: a table of per-head scalars for each offset
#   between patch tokens of the 32 x 32 grid, plus the class token's three), zero-initialised as MAE and BEiT
#   fine-tune from checkpoints without it; decayed like the other 2-D weights (mmseg's constructor exempts 1-D
#   parameters, biases and the unprefixed names only). A family without BEiT-style attention cannot run this
#   protocol (downstream/seg/swap.py says so).
# A config derived from it sets its backbone, the widths the rule gives it and its checkpoint.
# Deliberate difference (precision): the protocol builds float32; mixed precision is the run's `--amp` (fp16 or bf16
# as the device allows, vitbench/engine/amp.py; result.json cost.precision), where mmseg's MAE run trained in fp16
# (`fp16 = dict(loss_scale='dynamic')`, `--amp`).
_base_ = ['../models/upernet_vit.py', '../datasets/ade20k.py', '../schedules/seg_160k.py', '../seg_runtime.py']

# BEiT's relative position bias in every block (use_rel_pos_bias=True in BEiT's configs; mmseg's MAE backbone),
# zero-initialised: the pre-trained checkpoints have none (backbones/layers/beit_rel_pos.py)
model = dict(backbone=dict(rel_pos_bias=True), decode_head=dict(channels=768))
optim_wrapper = dict(paramwise_cfg=dict(decay_embeddings=True))

experiment = dict(protocol=dict(name='upernet_beit160k', settings=[
    'optim_wrapper', 'param_scheduler', 'train_cfg.max_iters', 'train_dataloader.batch_size', 'crop_size',
    'model.test_cfg', 'model.backbone.rel_pos_bias'], heads=dict(decode_head='embed_dim', auxiliary_head=256)))
