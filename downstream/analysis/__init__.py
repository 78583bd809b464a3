"""The representation analyses of MAE-lite §4 ("A Closer Look at Self-Supervised Lightweight Vision
Transformers"), as library code for ``tools/analyze.py``:

* ``cka``: layer-wise linear CKA, unbiased minibatch estimator (Fig. 1);
* ``attention_stats``: attention distance and entropy per layer and head (Eqs. 1-2, Fig. 5);
* ``fourier``: relative log amplitude of feature maps' high frequencies per layer (Fig. 3);
* ``keep_blocks``: top-1 against the number of pre-trained blocks kept (Figs. 2 and 4), read from the runs'
  result.json (the loading itself is ``keep_blocks`` of ``backbones.checkpoint.load_checkpoint``);
* ``models`` / ``images`` / ``features``: the inputs and per-layer tokens, ``analyses``: one pass over them all,
  ``figures``: the PNGs.

Nothing here registers anything; ``downstream`` does not import it.
"""
