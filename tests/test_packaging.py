"""vitbench installs as a package (issue 33): a non-editable wheel carries the data files the code reads at run time
(the leaderboard's paper rows, the ImageNet subset lists) and the license pyproject.toml declares."""
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_wheel_carries_the_data_the_code_reads(tmp_path):
    result = subprocess.run([sys.executable, '-m', 'pip', 'wheel', str(REPO), '--no-deps', '--no-build-isolation',
                             '-w', str(tmp_path), '-q'], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    (wheel,) = tmp_path.glob('vitbench-*.whl')
    names = set(zipfile.ZipFile(wheel).namelist())
    from pretrain.imagenet_subsets import SHIPPED
    from vitbench.results.paper import PAPER_RESULTS
    for path in [PAPER_RESULTS, *SHIPPED.values()]:  # where the code looks for them, as the wheel must hold them
        assert str(Path(path).relative_to(REPO)) in names, path
    assert any(n.endswith('.dist-info/licenses/LICENSE') for n in names)
