# Stanford Cars: 8,144 train / 8,041 test images, 196 classes; the devkit's .mat annotations:
# <data_root>/{devkit/cars_meta.mat, devkit/cars_train_annos.mat, cars_test_annos_withlabels.mat,
# cars_train/, cars_test/}. Whole images (the boxes are not used).
# A transfer config puts these into its dataloaders: dataset={{_base_.train_dataset}} / {{_base_.test_dataset}}.
data_root = 'data/stanford_cars'
train_dataset = dict(type='StanfordCars', data_root=data_root, split='train')
test_dataset = dict(type='StanfordCars', data_root=data_root, split='test')
