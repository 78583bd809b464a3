# Runtime of every frozen-feature evaluation (downstream/frozen, docs/downstream.md): no training; tools/test.py
# CONFIG CHECKPOINT runs FrozenFeatureLoop, which computes (or reads from work_dir/features/) the features of the
# training collection and of the test set and scores them with FrozenFeatureMetric: DINO's weighted k-NN
# (eval_knn.py: k=20, T=0.07), category-level retrieval mAP (Grafit, thesis §2.3.2) and DINO's linear probe
# (eval_linear.py: SGD, momentum 0.9, lr 0.001 x batch/256, cosine, 100 epochs, batch 1024).
default_scope = 'vitbench'
custom_imports = dict(imports=['backbones', 'downstream'], allow_failed_imports=False)
env_cfg = dict(cudnn_benchmark=False, mp_cfg=dict(mp_start_method='fork'), dist_cfg=dict(backend='nccl'))
log_level = 'INFO'
default_hooks = dict(logger=dict(type='LoggerHook', interval=50), timer=dict(type='IterTimerHook'))
test_evaluator = dict(type='FrozenFeatureMetric', k=20, temperature=0.07,
                      linear_probe=dict(epochs=100, batch_size=1024, base_lr=0.001))
randomness = dict(seed=0)
# on several processes nothing trains: mmengine's DDP wrapper refuses a model with no parameter to train, the
# separate wrapper leaves such submodules as they are (the features are gathered by downstream/frozen/features.py)
model_wrapper_cfg = dict(type='MMSeparateDistributedDataParallel')
