# Attention-only fine-tuning at 384 of a DeiT III ViT-B trained at 224 ("Three things everyone should know about
# ViTs", §4 / Table 5: 84.3 top-1 / V2 74.0 with AdamW, as full fine-tuning 84.3 / 73.7, from 400-epoch models; the
# paper gives neither the epochs nor the rate of its fine-tuning). Trained: the qkv and proj weights of every
# attention layer, pos_embed (bicubically resized at load) and the head; frozen: patch embedding, class token,
# LayerNorms, MLPs, LayerScale (pretrain/finetune.py). Everything else is deit3_base_full_ft384.py, the DeiT III
# resolution fine-tuning (README_revenge.md ViT-B 384 command; thesis §6.3.6): AdamW 1e-5 at batch 512, weight
# decay 0.1, 20 epochs, RandAugment, Mixup / CutMix, smoothing 0.1, no repeated aug, drop path 0.15.
#   python tools/train.py configs/finetune/deit3_base_attn_ft384.py --amp [--checkpoint PATH]
_base_ = ['./deit3_base_full_ft384.py']

model = dict(trainable='attention')
