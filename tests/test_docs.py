"""The README orients and docs/ holds the rest: the README stays short, shows the two commands on its first screen,
maps every file of docs/, says what CI runs as .ci/run runs it, and no relative link of the README or docs/ is
broken (a file, or a heading of one)."""
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_README_LINES = 300
FIRST_SCREEN = 40
LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')
FENCE = re.compile(r'^```.*?^```', re.M | re.S)
INLINE_CODE = re.compile(r'`[^`\n]*`')


def prose(text):
    """Markdown without its code: links in code blocks and spans are examples, not links."""
    return INLINE_CODE.sub('', FENCE.sub('', text))


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r'[^\w\- ]', '', heading.strip().lower()).replace(' ', '-')


def anchors(path):
    headings = re.findall(r'^#{1,6} (.+)$', FENCE.sub('', path.read_text()), re.M)
    return {slug(INLINE_CODE.sub(lambda m: m.group(0)[1:-1], h)) for h in headings}


def broken_links(text, where):
    """Each relative link of a markdown text at `where` whose file or heading does not exist."""
    problems = []
    for target in LINK.findall(prose(text)):
        if re.match(r'[a-z]+:', target):  # https:, mailto:
            continue
        file, _, anchor = target.partition('#')
        path = (where.parent / file).resolve() if file else where
        if not path.exists():
            problems.append(f'{where.name} links {target}: no such file')
        elif anchor and path.suffix == '.md' and anchor not in anchors(path):
            problems.append(f'{where.name} links {target}: {path.name} has no heading with that anchor')
    return problems


def documentation_map(readme):
    """The README's map of docs/: its '## Documentation' section."""
    parts = re.split(r'^## Documentation\n', readme, flags=re.M)
    return parts[1].split('\n## ')[0] if len(parts) == 2 else ''


def make_targets(text):
    return re.findall(r'\bmake ([\w-]+)', text)


def readme_problems(readme, docs=REPO / 'docs', ci=REPO / '.ci' / 'run', makefile=REPO / 'Makefile'):
    """Everything wrong with a README text, one line each (empty when it orients as it should)."""
    lines = readme.splitlines()
    problems = []
    if len(lines) > MAX_README_LINES:
        problems.append(f'README.md has {len(lines)} lines; at most {MAX_README_LINES}: move detail into docs/')
    first_screen = '\n'.join(lines[:FIRST_SCREEN])
    for command in ('make demo', 'make test'):
        if not re.search(rf'^{command}\b', first_screen, re.M):
            problems.append(f'README.md: `{command}` is not a command line of its first {FIRST_SCREEN} lines')
    mapped = documentation_map(readme)
    if not mapped:
        problems.append("README.md has no '## Documentation' section mapping docs/")
    linked = {(REPO / target.partition('#')[0]).resolve() for target in LINK.findall(mapped)}
    for doc in sorted(docs.glob('*.md')):
        if doc.resolve() not in linked:
            problems.append(f"README.md's map does not link docs/{doc.name}")
    problems += broken_links(mapped, REPO / 'README.md')
    ci_runs = make_targets('\n'.join(line for line in ci.read_text().split('\n') if not line.startswith('#')))
    said = [line for line in lines if '.ci/run' in line]
    if [make_targets(line) for line in said] != [ci_runs]:
        problems.append(f'README.md should say, on one line naming .ci/run, that CI runs '
                        f'{", then ".join("make " + t for t in ci_runs)}; it says {said or "nothing"}')
    defined = set(re.findall(r'^([\w-]+):', makefile.read_text(), re.M))
    problems += [f'.ci/run runs make {t}, which the Makefile does not define' for t in ci_runs if t not in defined]
    return problems


def test_the_readme_orients():
    problems = readme_problems((REPO / 'README.md').read_text())
    assert not problems, '\n'.join(problems)


def test_no_relative_link_of_the_readme_or_docs_is_broken():
    documents = [REPO / 'README.md', *sorted((REPO / 'docs').glob('*.md'))]
    problems = [problem for doc in documents for problem in broken_links(doc.read_text(), doc)]
    assert not problems, '\n'.join(problems)


def test_the_check_fails_on_a_readme_that_does_not_orient(tmp_path):
    """A long README whose commands sit below its first screen, without a map, and a CI that runs more than it says:
    each is named."""
    (tmp_path / 'orphan.md').write_text('# orphan\n')
    ci = tmp_path / 'run'
    ci.write_text('# CI\nmake test\nmake test-demo\n')
    readme = '# vitbench\n' + 'prose\n' * 400 + '```\nmake demo\nmake test\n```\nCI (`.ci/run`) runs `make test`.\n'
    problems = readme_problems(readme, docs=tmp_path, ci=ci)
    assert f'README.md has {len(readme.splitlines())} lines; at most 300: move detail into docs/' in problems
    assert sum('is not a command line of its first 40 lines' in p for p in problems) == 2, problems
    assert any("no '## Documentation' section" in p for p in problems), problems
    assert any('does not link' in p and 'orphan.md' in p for p in problems), problems
    assert any('CI runs make test, then make test-demo' in p for p in problems), problems


def test_a_link_to_a_missing_file_or_heading_is_named(tmp_path):
    (tmp_path / 'a.md').write_text('# Title\n\n## Some `code`: here\n')
    text = '[ok](a.md) [ok](a.md#some-code-here) [file](b.md) [heading](a.md#nowhere) [web](https://x.org) `[code](c.md)`'
    assert broken_links(text, tmp_path / 'index.md') == [
        'index.md links b.md: no such file', 'index.md links a.md#nowhere: a.md has no heading with that anchor']
