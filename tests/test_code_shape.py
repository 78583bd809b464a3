"""The shape of the code a newcomer reads: no source file over 400 lines (issue 32), so that each holds one concern
and can be read at once; a longer one is split by concern, as harness/pipeline/spec.py was."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ('backbones', 'pretrain', 'downstream', 'vitbench', 'harness', 'tools', 'tests')
MAX_LINES = 400


def too_long(root: Path = ROOT, limit: int = MAX_LINES):
    """'path: N lines' for every .py file under the source folders with more than ``limit`` lines."""
    found = []
    for path in sorted(p for folder in FOLDERS for p in (root / folder).rglob('*.py')):
        lines = len(path.read_text(encoding='utf-8').splitlines())
        if lines > limit:
            found.append(f'{path.relative_to(root)}: {lines} lines')
    return found


def test_no_source_file_is_over_400_lines():
    long = too_long()
    assert not long, (f'{len(long)} source file(s) over {MAX_LINES} lines; split each by concern:\n  '
                      + '\n  '.join(long))


def test_a_long_file_is_named_with_its_length(tmp_path):
    (tmp_path / 'tools').mkdir()
    (tmp_path / 'tools' / 'short.py').write_text('x = 1\n' * MAX_LINES)
    (tmp_path / 'vitbench' / 'deep').mkdir(parents=True)
    (tmp_path / 'vitbench' / 'deep' / 'long.py').write_text('x = 1\n' * (MAX_LINES + 1))
    (tmp_path / 'vitbench' / 'notes.txt').write_text('x\n' * 1000)  # not Python
    assert too_long(tmp_path) == [f'{Path("vitbench/deep/long.py")}: {MAX_LINES + 1} lines']
