# FFN-only fine-tuning at 384 of a ViT-B trained at 224 ("Three things everyone should know about ViTs", §4,
# Table 5, AdamW: 84.1 top-1 / 73.6 ImageNet-V2, against 84.3 / 74.0 attention-only and 84.3 / 73.7 full).
# Trained: fc1 and fc2 of every MLP (every branch of parallel blocks), pos_embed (bicubically resized 14x14 ->
# 24x24 at load) and the head; frozen: patch embedding, class token, LayerNorms, attention, LayerScale
# (pretrain/finetune.py). Same schedule and starting checkpoint as deit3_base_attn_ft384.py (the paper gives
# neither its fine-tuning epochs nor its lr; its models are the 400-epoch + LayerScale baselines).
#   python tools/train.py configs/finetune/deit3_base_ffn_ft384.py --checkpoint work_dirs/<ViT-B>/backbone.pth
_base_ = ['./deit3_base_attn_ft384.py']

model = dict(trainable='ffn')
