# iNaturalist 2019: 265,240 train / 3,003 val images (DeiT III thesis Table 6.10), 1,010 species (the val
# split is the test set); <data_root>/{train_val2019/, train2019.json, val2019.json} as downloaded.
# A transfer config puts these into its dataloaders: dataset={{_base_.train_dataset}} / {{_base_.test_dataset}}.
data_root = 'data/inat2019'
train_dataset = dict(type='INaturalist', data_root=data_root, split='train', year=2019)
test_dataset = dict(type='INaturalist', data_root=data_root, split='val', year=2019)
