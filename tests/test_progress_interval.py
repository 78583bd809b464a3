"""Each training prints its progress at a rate for its length (issue 47: the demo UperNet run, 40 iterations at the
config's interval of 20, printed two lines): harness/experiment/progress.py lowers the LoggerHook's interval to
ceil(iterations / 10), never raises it."""
import re

from _input_fault_helpers import toy  # noqa: F401 (a fixture)
from _tool_helpers import CONFIG
from harness.experiment.progress import PROGRESS_LINES, progress_interval


def test_the_interval_gives_a_short_run_several_lines_and_a_long_one_no_more_than_its_config():
    assert PROGRESS_LINES == 10
    assert progress_interval(40, configured=20) == 4         # the demo UperNet: 10 lines, not 2
    assert progress_interval(7, configured=10) == 1          # shorter than the lines: every iteration
    assert progress_interval(160_000, configured=50) == 50   # seg_160k: as its config says, not 16 000
    assert progress_interval(1000, configured=1) == 1        # an interval asked for is never raised
    assert progress_interval(0, configured=50) == 50


def test_tools_train_prints_about_ten_progress_lines_whatever_the_config_interval(toy, tmp_path):  # noqa: F811
    assert toy(CONFIG, '--work-dir', tmp_path, '--cfg-options', 'train_cfg.max_iters=20',
               'default_hooks.logger.interval=50', 'default_hooks.checkpoint.interval=20') == 0
    (log,) = tmp_path.glob('*/*.log')
    # the toy's log processor counts by epoch: '(train) [1][2/8]', ..., '[1][20/8]'
    steps = re.findall(r'\(train\) \[1\]\[\s*(\d+)/\d+\]', log.read_text())
    assert [int(s) for s in steps] == list(range(2, 21, 2))
