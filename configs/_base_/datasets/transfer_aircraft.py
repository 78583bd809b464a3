# FGVC Aircraft 2013b, variant level: 6,667 trainval / 3,333 test images, 100 classes;
# <data_root>/data/{images/, variants.txt, images_variant_trainval.txt, images_variant_test.txt}.
# A transfer config puts these into its dataloaders: dataset={{_base_.train_dataset}} / {{_base_.test_dataset}}.
data_root = 'data/fgvc-aircraft-2013b'
train_dataset = dict(type='FGVCAircraft', data_root=data_root, split='trainval', level='variant')
test_dataset = dict(type='FGVCAircraft', data_root=data_root, split='test', level='variant')
