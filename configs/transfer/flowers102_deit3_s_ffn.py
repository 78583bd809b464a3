# Flowers-102, DeiT III ViT-S, FFN-only fine-tuning ("Three things everyone should know about ViTs", §4,
# Table 6: 96.1 top-1, against 96.9 attention-only and 96.8 fully fine-tuned). Trained: fc1 and fc2 of every
# MLP (every branch of parallel blocks), pos_embed and the head; frozen: patch embedding, class token,
# LayerNorms, attention, LayerScale (pretrain/finetune.py). Same schedule as flowers102_deit3_s.py.
#   python tools/train.py configs/transfer/flowers102_deit3_s_ffn.py --checkpoint work_dirs/<ViT-S>/backbone.pth
_base_ = ['./flowers102_deit3_s.py']

model = dict(trainable='ffn')
