"""Oxford-IIIT Pets: ``images/<Breed>_<n>.jpg`` and the split lists ``annotations/{trainval,test}.txt``.

A line is ``<image> <class id 1..37> <species 1:cat 2:dog> <breed id>``; the 37 breeds are the classes
(class names from the image names). Both split files are read, so train and test share one class list.
"""
from typing import Dict, List, Tuple

from vitbench.registry import DATASETS

from .base import TransferDataset


@DATASETS.register_module()
class OxfordIIITPet(TransferDataset):
    LAYOUT = """\
<data_root>/
  images/Abyssinian_1.jpg ...            <Breed>_<n>.jpg
  annotations/trainval.txt, test.txt     "<image> <class id 1..37> <species 1:cat 2:dog> <breed id>" per line
  annotations/list.txt                   the same lines for all images, after a '#' header
  annotations/trimaps/Abyssinian_1.png   1 = pet, 2 = background, 3 = border"""
    SPLITS = ('trainval', 'test')
    OFFICIAL = dict(classes=37, trainval=3680, test=3669)
    IMAGES = 'images'
    ANNOTATIONS = dict(trainval='annotations/trainval.txt', test='annotations/test.txt')

    def load_split(self) -> Tuple[List[str], List[dict]]:
        names: Dict[int, str] = {}
        samples = {}
        for split in self.SPLITS:
            rel = self.ANNOTATIONS[split]
            samples[split] = []
            for n, line in self.read_lines(rel):
                if line.startswith('#'):
                    continue  # list.txt's header style, tolerated here too
                fields = line.split()
                if len(fields) != 4 or not fields[1].isdigit() or int(fields[1]) < 1:
                    raise self.format_error(rel, f'line {n} {line!r}: expected "<image> <class id 1..37> '
                                            '<species> <breed id>"')
                image, class_id = fields[0], int(fields[1])
                breed = image.rsplit('_', 1)[0]
                if names.setdefault(class_id, breed) != breed:
                    raise self.format_error(rel, f'line {n}: class {class_id} is {names[class_id]!r} elsewhere, '
                                            f'here {breed!r}')
                samples[split].append((image + '.jpg', class_id))
        if sorted(names) != list(range(1, len(names) + 1)):
            raise self.format_error('annotations/', f'class ids should be 1..{len(names)}, got {sorted(names)}')
        mine = samples[self.split]
        self.check_images(self.IMAGES, [f for f, _ in mine], self.ANNOTATIONS[self.split])
        classes = [names[c] for c in sorted(names)]
        return classes, [dict(img_path=self.path(f'{self.IMAGES}/{f}'), gt_label=c - 1) for f, c in mine]
