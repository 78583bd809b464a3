# Oxford-IIIT Pets: 3,680 trainval / 3,669 test images, 37 breeds;
# <data_root>/{images/, annotations/trainval.txt, annotations/test.txt} as downloaded.
# A transfer config puts these into its dataloaders: dataset={{_base_.train_dataset}} / {{_base_.test_dataset}}.
data_root = 'data/oxford-iiit-pet'
train_dataset = dict(type='OxfordIIITPet', data_root=data_root, split='trainval')
test_dataset = dict(type='OxfordIIITPet', data_root=data_root, split='test')
