"""The one build step pyproject.toml cannot declare: the wheel carries the configs, the tools and the lock file in
vitbench/.mim/ (as mmpretrain ships its configs), with CITATION.cff, where vitbench.console finds them once installed. They are
copied at build time rather than kept twice in the repository; an editable install reads the checkout's own."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
SHIPPED = {'configs': 'configs', 'tools': 'tools', 'requirements.lock': 'requirements.lock',
           'CITATION.cff': 'CITATION.cff'}  # how to cite the suite, with the installed package


class BuildWithConfigs(build_py):
    def run(self):
        super().run()
        if self.editable_mode:  # vitbench.console falls back to the checkout's folders
            return
        target = os.path.join(self.build_lib, 'vitbench', '.mim')
        shutil.rmtree(target, ignore_errors=True)  # nothing left from an earlier build of another tree
        for source, name in SHIPPED.items():
            path = os.path.join(ROOT, source)
            if not os.path.exists(path):  # e.g. an sdist made without MANIFEST.in
                raise FileNotFoundError(f'{path} is missing: the wheel must ship it (vitbench/console.py)')
            if os.path.isdir(path):
                shutil.copytree(path, os.path.join(target, name),
                                ignore=shutil.ignore_patterns('__pycache__', '*.pyc', '*.sh'))
            else:
                os.makedirs(target, exist_ok=True)
                shutil.copy2(path, os.path.join(target, name))


setup(cmdclass={'build_py': BuildWithConfigs})
