# Flowers-102, DeiT III ViT-S, attention-only fine-tuning ("Three things everyone should know about ViTs", §4,
# Table 6: 96.9 top-1 vs 96.8 fully fine-tuned; the DeiT III transfer results fine-tune only the attention on
# Flowers: +0.2). Trained: qkv and proj of every attention layer, pos_embed and the head; frozen: patch embedding, class
# token, LayerNorms, MLPs, LayerScale (pretrain/finetune.py). Same schedule as flowers102_deit3_s.py.
_base_ = ['./flowers102_deit3_s.py']

model = dict(trainable='attention')
