# Full fine-tuning at 384 of a DeiT III ViT-B (the baseline of deit3_base_attn_ft384.py: 84.3 top-1 in
# "Three things", Table 5, AdamW). Same schedule; every weight is trained.
_base_ = ['./deit3_base_attn_ft384.py']

model = dict(trainable='all')
