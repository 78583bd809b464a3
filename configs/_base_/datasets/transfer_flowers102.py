# Oxford Flowers-102: train + val = 2,040 images for training, 6,149 test images, 102 classes;
# <data_root>/{jpg/image_*.jpg, imagelabels.mat, setid.mat} as downloaded.
# A transfer config puts these into its dataloaders: dataset={{_base_.train_dataset}} / {{_base_.test_dataset}}.
data_root = 'data/flowers102'
train_dataset = dict(type='Flowers102', data_root=data_root, split='trainval')
test_dataset = dict(type='Flowers102', data_root=data_root, split='test')
