# Protocol semfpn_maelite160k: Semantic FPN on ADE20k as MAE-lite fine-tunes its ViT-Tiny (Wang et al., "A Closer
# Look at Self-Supervised Lightweight Vision Transformers"; the ADE20k numbers of its released code). Values from
# wangsr126/MAE-Lite projects/eval_tools/seg/configs/sem_fpn/semantic_fpn_t_160k.py (its bases _base_/models/
# fpn_mae.py, _base_/datasets/ade20k.py, _base_/schedules/schedule_160k.py; the neck featurepyramid.py;
# semantic_fpn_t_160k_mae_d2_distill.py differs only in its checkpoint), on mmsegmentation v1.1.1's
# LayerDecayOptimizerConstructor. Audited value by value from the built optimiser, model and the resolved config:
# tests/protocol_audit/segmentation.yaml.
# - AdamW lr 1e-4, betas (0.9, 0.999), weight decay 0.05, layer-wise lr decay 0.8 over 12 layers (embeddings at
#   0.8^13, block i at 0.8^(12-i), neck and head at 1); no weight decay on 1-D parameters (norms, biases); the
#   position embedding and class token ARE decayed (`decay_embeddings`: mmseg's exemption compares
#   ('pos_embed', 'cls_token') with `backbone.`-prefixed names and never matches);
# - 1,500 linear warm-up iterations from 1e-6 x lr, then poly (power 1) to 0 at 160k; batch 16 (8 GPUs x 2);
#   mixed precision (fp16, dynamic loss scale: speed and memory, `--amp`); seed 0;
# - 512 x 512 crops of mmseg's ADE20k pipeline; single-scale test with a 512 sliding window (stride 341);
# - blocks 3, 5, 7, 11 (drop path 0.1, raw block outputs) into Feature2Pyramid_Scale: x4 / x2 / x1 / x0.5 maps
#   narrowed to int(embed_dim x 0.25) channels (48 for ViT-Tiny), then FPNHead (feature strides 4-32, dropout
#   0.1), no auxiliary head;
# - head rule (`heads`, for every run, --backbone or not; downstream/head_rule.py): FPNHead 128 channels for every
#   backbone (fpn_mae.py's, which the Tiny config keeps). The neck's width is no head rule but the neck's own
#   scale_factor 0.25 of the backbone's width, as MAE-lite's code computes it.
# Deliberate differences: mmseg's MAE backbone, which MAE-lite trains, has in every block a relative position
# bias table (zero-initialised) and a learnable LayerScale (init_values=1.0, identity at the start) that the
# pre-trained ViT-Tiny has not; the suite's ViT has only ViTDet's decomposed biases (another parameterisation,
# so none is used) and loads no checkpoint into a LayerScale the file lacks, so neither is used here.
# A config derived from it sets its backbone (and the neck's and head's input widths for it) and its checkpoint.
# Deliberate difference (precision): the protocol builds float32; mixed precision is the run's `--amp` (fp16 or bf16
# as the device allows, vitbench/engine/amp.py; result.json cost.precision), where MAE-lite's config sets fp16 with
# a dynamic loss scale.
_base_ = ['../models/semfpn_vit.py', '../datasets/ade20k.py', '../schedules/seg_160k.py', '../seg_runtime.py']

optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.8, decay_embeddings=True))
randomness = dict(seed=0)

experiment = dict(protocol=dict(name='semfpn_maelite160k', settings=[
    'optim_wrapper', 'param_scheduler', 'train_cfg.max_iters', 'train_dataloader.batch_size', 'crop_size',
    'model.test_cfg', 'model.neck.scale_factor', 'model.decode_head.feature_strides'],
    heads=dict(decode_head=128)))
