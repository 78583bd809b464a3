# Stanford Cars, DeiT III ViT-S, FFN-only fine-tuning ("Three things", §4, Table 6: 88.3 top-1, against 89.8
# attention-only and 89.7 fully fine-tuned). Same schedule as cars_deit3_s.py; what is trained: see
# flowers102_deit3_s_ffn.py.
#   python tools/train.py configs/transfer/cars_deit3_s_ffn.py --checkpoint work_dirs/<ViT-S>/backbone.pth
_base_ = ['./cars_deit3_s.py']

model = dict(trainable='ffn')
