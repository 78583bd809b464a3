# CIFAR-100: 50,000 train / 10,000 test images (32x32, upscaled by the recipe's pipeline), 100 fine classes;
# the python-version pickles: <data_root>/cifar-100-python/{train,test,meta}.
# A transfer config puts these into its dataloaders: dataset={{_base_.train_dataset}} / {{_base_.test_dataset}}.
data_root = 'data/cifar100'
train_dataset = dict(type='CIFAR100', data_root=data_root, split='train')
test_dataset = dict(type='CIFAR100', data_root=data_root, split='test')
