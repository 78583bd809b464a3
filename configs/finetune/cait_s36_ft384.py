# CaiT-S-36↑384Υ: the 384 fine-tuning of the 400-epoch distilled CaiT-S-36 (configs/pretrain/cait_s36_in1k_400e.py),
# CaiT Table 3 / thesis Table 3.15 "↑384Υ": the schedule of ./cait_m36_ft384.py (DeiT's 384 fine-tune, which that
# file derives), with this model's drop path (0.2, its 224 config) and LayerScale init (the variant). Expected: 85.4
# top-1 (Table 3 "↑384Υ"); without distillation (model.distillation=None here and in the 224 training, whose
# backbone.pth --checkpoint then names) 85.0 ("↑384").
#   python tools/train.py configs/finetune/cait_s36_ft384.py --amp [--checkpoint PATH]
_base_ = ['./cait_m36_ft384.py']

checkpoint = 'work_dirs/cait_s36_in1k_400e/backbone.pth'
model = dict(backbone=dict(arch='cait_s36_224', drop_path_rate=0.2, init_cfg=dict(checkpoint=checkpoint)))
experiment = dict(backbone='cait_s36_224', backbone_overrides=dict(drop_path_rate=0.2))
