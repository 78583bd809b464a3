"""A run stopped by one of the suite's own checks, of a kind it knows, says so in one line naming the option or
config key to change with its full path (``optim_wrapper.paramwise_cfg.layer_decay_rate``, not
``paramwise_cfg.layer_decay_rate``), as a config error does before the run starts.

The checks raise :class:`RefusalValueError` or :class:`RefusalTypeError`: a :class:`Refusal` and the built-in type
the check raised before (code and tests that catch ``ValueError`` / ``TypeError`` still do). The tools
(``harness.experiment.cli.run_main``: tools/train.py, tools/test.py, and through them every stage of
tools/pipeline.py) print a Refusal as ``error: MESSAGE`` with exit status 2; any other exception keeps its
traceback, which is what an error nobody foresaw needs. mmengine's builders re-raise an error of a constructor as
``type(e)(f'class ... : {e}')``: a refusal keeps its type through them, with the class named in front.
"""


class Refusal(Exception):
    """A known refusal at run time; its message is one line naming the option or key (full path) and the fix."""

    def one_line(self) -> str:
        """The message without a traceback a worker process put in front of it (PyTorch's re-raise)."""
        text = str(self).rstrip()
        marker = f'{type(self).__name__}: '
        return text.rsplit(marker, 1)[-1] if marker in text else text


class RefusalValueError(Refusal, ValueError):
    """A refused value: a batch size, a width, a class count."""


class RefusalTypeError(Refusal, TypeError):
    """A refused kind of object: a backbone without what an option needs."""
