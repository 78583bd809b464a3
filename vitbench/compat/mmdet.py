"""mmdet's private internals the suite relies on (written for mmdet 3.3.0; see ``WRITTEN_FOR``). mmdet is not
imported here: the functions take its objects."""
from typing import Callable


def load_coco_data_list(dataset, load_data_list: Callable[[], list], open_annotations: Callable) -> list:
    """``load_data_list()`` (mmdet's ``CocoDataset.load_data_list``, bound to ``dataset``) with the annotation
    file read by ``open_annotations(coco_api, path)`` instead of ``coco_api(path)``, ``coco_api`` being the
    dataset class's ``COCOAPI``.

    Shadows ``COCOAPI`` on the instance for the call: mmdet builds its COCO object from ``self.COCOAPI`` and
    deletes it before returning, and it has no hook to check the annotations (or to keep their categories) that
    would not read the file a second time."""
    api = type(dataset).COCOAPI
    dataset.COCOAPI = lambda path: open_annotations(api, path)
    try:
        return load_data_list()
    finally:
        del dataset.COCOAPI


def coco_metric_ground_truth(metric):
    """The pycocotools ``COCO`` object of the ground truth a ``CocoMetric`` evaluated against last.

    Reads ``CocoMetric._coco_api``: mmdet builds it from ``ann_file``, or from the ground truth it gathered when
    there is none, and exposes it nowhere else."""
    return metric._coco_api
