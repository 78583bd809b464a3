# Stanford Cars, DeiT III ViT-S, attention-only fine-tuning ("Three things", §4, Table 6: 89.8 top-1 vs 89.7
# fully fine-tuned). Same schedule as cars_deit3_s.py; what is trained: see flowers102_deit3_s_attn.py.
_base_ = ['./cars_deit3_s.py']

model = dict(trainable='attention')
