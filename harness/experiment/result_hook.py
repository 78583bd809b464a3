"""``ResultRecorderHook``: when a run writes its ``result.json`` (harness/experiment/result_record.py builds and writes
the record), and the run's cost meter (``vitbench.engine.run_cost``) it drives: started before the run, images counted
per training iteration, totals carried in runner checkpoints. The last validation's metrics travel in runner
checkpoints too, so that a resumed run records what the run that never stopped would have."""
import numbers
from typing import Dict, Optional

from mmengine.hooks import Hook
from mmengine.runner import EpochBasedTrainLoop

from harness.experiment.protocol import protocol_of
from harness.experiment.result_record import experiment_of, record_run
from vitbench.engine.run_cost import meter_of
from vitbench.engine.run_state import training_done
from vitbench.registry import HOOKS
from vitbench.results import per_image

_LAST_VALIDATION = 'vitbench_last_validation'  # runner checkpoints' meta: the metrics a resumed run reports


@HOOKS.register_module()
class ResultRecorderHook(Hook):
    """Writes ``work_dir/result.json`` after training (last validation + final loss) and after testing; drives
    the run's cost meter (started before the run, images counted per training iteration, totals carried in
    runner checkpoints). The last validation's metrics travel in runner checkpoints too, and a run resumed after
    its last iteration runs the validation it missed: killed anywhere between the last checkpoint and its
    result.json, a resumed run records what the run that never stopped would have."""

    priority = 'LOWEST'  # after the other hooks have logged and saved

    def __init__(self):
        self._metrics: Dict[str, float] = {}
        self._validated_at: Optional[int] = None  # training iterations done when the last validation ran
        self._loaded = None  # (iteration, last validation) of the runner checkpoint loaded, until before_train

    def before_run(self, runner) -> None:
        experiment_of(runner.cfg)  # fail now, not after hours of training, if the record cannot be made
        protocol_of(runner.cfg)  # (a config run without tools/train.py's checks)
        meter_of(runner).start()

    def after_load_checkpoint(self, runner, checkpoint) -> None:
        meter_of(runner).loaded(checkpoint)
        meta = checkpoint.get('meta') or {}
        self._loaded = (meta.get('iter'), meta.get(_LAST_VALIDATION))

    def before_train(self, runner) -> None:
        meter_of(runner).resume_if_resumed(runner)  # runner.iter is the resumed one by now
        iteration, last = self._loaded or (None, None)
        self._loaded = None
        if runner.iter and iteration == runner.iter and isinstance(last, dict):
            # resumed (not weights loaded with load_from): the validation before the checkpoint is this run's too
            self._metrics, self._validated_at = dict(last['metrics']), last['iter']
        if self._missed_last_validation(runner):
            runner.logger.info('resumed after the last training iteration, before the validation that follows it: '
                               'validating now, as the run that never stopped did')
            runner.val_loop.run()

    def _missed_last_validation(self, runner) -> bool:
        """A run resumed from the checkpoint of its last iteration (killed before the validation mmengine runs
        after it, or while exporting or recording) would end without that validation's metrics. mmengine's loops
        validate after the last iteration whenever there is a validation loop and the run reaches ``val_begin``."""
        loop = runner.train_loop
        end = loop.max_epochs if isinstance(loop, EpochBasedTrainLoop) else loop.max_iters
        return (training_done(runner) and runner.val_loop is not None and end >= loop.val_begin
                and self._validated_at != runner.iter)

    def before_train_iter(self, runner, batch_idx, data_batch=None) -> None:
        meter_of(runner).count(data_batch)  # before, so that the checkpoint after this iteration counts it

    def before_save_checkpoint(self, runner, checkpoint) -> None:
        meter_of(runner).saving(runner, checkpoint)
        if self._validated_at is not None:  # plain numbers: the checkpoint policy's safe loader reads them back
            checkpoint.setdefault('meta', {})[_LAST_VALIDATION] = dict(iter=int(self._validated_at), metrics={
                k: float(v) for k, v in self._metrics.items() if isinstance(v, numbers.Real)})

    def before_val_epoch(self, runner) -> None:
        per_image.take_published()  # what an evaluation outside this loop left: not this run's

    before_test_epoch = before_val_epoch

    def after_val_epoch(self, runner, metrics=None) -> None:
        self._metrics = dict(metrics or {})
        self._validated_at = runner.iter
        self._write_evidence(runner)

    @staticmethod
    def _write_evidence(runner) -> None:
        """``per_image.npz``: the per-image arrays the metrics of this evaluation published (rank 0 computes)."""
        evidence = per_image.take_published()
        if evidence and runner.rank == 0:
            per_image.write(runner.work_dir, evidence)

    def after_train(self, runner) -> None:
        metrics = dict(self._metrics)
        loss = runner.message_hub.log_scalars.get('train/loss')
        if loss is not None:
            metrics['loss'] = float(loss.current())
        self._record(runner, metrics, training=True)

    def after_test_epoch(self, runner, metrics=None) -> None:
        self._write_evidence(runner)
        self._record(runner, dict(metrics or {}), training=False)

    def _record(self, runner, metrics: Dict[str, float], training: bool) -> None:
        path = record_run(runner, metrics, training)
        if path:
            runner.logger.info(f'result written to {path}')
