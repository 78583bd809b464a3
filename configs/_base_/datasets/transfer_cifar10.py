# CIFAR-10: 50,000 train / 10,000 test images (32x32, upscaled by the recipe's pipeline), 10 classes; the
# python-version pickles: <data_root>/cifar-10-batches-py/{data_batch_1..5,test_batch,batches.meta}.
# A transfer config puts these into its dataloaders: dataset={{_base_.train_dataset}} / {{_base_.test_dataset}}.
data_root = 'data/cifar10'
train_dataset = dict(type='CIFAR10', data_root=data_root, split='train')
test_dataset = dict(type='CIFAR10', data_root=data_root, split='test')
