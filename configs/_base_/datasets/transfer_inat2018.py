# iNaturalist 2018: 437,513 train / 24,426 val images, 8,142 species (the val split is the test set);
# <data_root>/{train_val2018/, train2018.json, val2018.json} as downloaded.
# A transfer config puts these into its dataloaders: dataset={{_base_.train_dataset}} / {{_base_.test_dataset}}.
data_root = 'data/inat2018'
train_dataset = dict(type='INaturalist', data_root=data_root, split='train', year=2018)
test_dataset = dict(type='INaturalist', data_root=data_root, split='val', year=2018)
