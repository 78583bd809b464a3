# Distilled MAE-Tiny on the other target of the official code (mae_lite_distill_exp.py, off there:
# distill_hidden_idx=()): hidden states instead of attention maps, MAE-lite §5's "attention vs hidden" comparison.
# MSE between the teacher's last hidden state (index 12 of 0..12: the final norm's output over the visible tokens)
# and the student's through a learnable linear adapter 192 -> 768 (use_hidden_adapter), weight 1.0
# (distill_hidden_alpha); no attention term. Compare with dmae_vit_tiny12h_in1k_400e.py (last-block attention, the
# paper's choice) after the same fine-tuning (Fig. 7: 100 epochs, see dmae_vit_tiny12h_in1k_400e_attn_all.py).
# Both targets at once: --cfg-options "model.distill_layers=[-1]".
_base_ = ['./dmae_vit_tiny12h_in1k_400e.py']

model = dict(distill_layers=[], distill_hidden_layers=[-1], hidden_alpha=1.0)
experiment = dict(pretrain=dict(recipe='dmae_hidden_last'))
