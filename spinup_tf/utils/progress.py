"""What a run says while it runs: a one-line progress display inside each epoch, the config
in short form at the start, and where the results are at the end.

The display (:class:`Progress`) shows the steps done in the epoch and in all, steps per
second, the epoch's episodes and last return, and the time left. On a terminal (stderr is a
TTY) it is redrawn in place at most every ``REDRAW_S`` seconds and erased before the epoch's
table; otherwise (CI, nohup, a file) it is a plain line every ``SPINUP_PROGRESS_EVERY``
seconds (default 60), so logs stay readable. ``SPINUP_PROGRESS=0`` turns it off. It only
reads the clock and the logger: what a run computes does not depend on it.
"""
import os
import os.path as osp
import sys
import time

REDRAW_S = 0.25
PLAIN_EVERY_S = 60.0


def _duration(seconds):
    seconds = int(max(0, seconds))
    if seconds >= 3600:
        return '%dh%02dm' % (seconds // 3600, seconds % 3600 // 60)
    if seconds >= 60:
        return '%dm%02ds' % (seconds // 60, seconds % 60)
    return '%ds' % seconds


class Progress:
    """``progress(done)`` after each env step (``done``: steps done in the run, from 0).

    Args:
        logger: the run's ``EpochLogger`` (its output folder, and ``EpRet`` stored so far
            this epoch for the episodes and the last return).
        steps_per_epoch, total_steps: the run's budget.
        start (int): steps already done when this process started (a resumed run).
        stream: where the display goes (default ``sys.stderr``).
        interval (float): seconds between two plain lines when ``stream`` is not a TTY.
    """

    def __init__(self, logger, steps_per_epoch, total_steps, start=0, stream=None,
                 interval=None, clock=time.monotonic):
        self.logger, self.spe, self.total = logger, steps_per_epoch, total_steps
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = os.environ.get('SPINUP_PROGRESS', '1') != '0'
        self.tty = bool(getattr(self.stream, 'isatty', lambda: False)())
        if interval is None:
            interval = float(os.environ.get('SPINUP_PROGRESS_EVERY', PLAIN_EVERY_S))
        self.every = REDRAW_S if self.tty else interval
        self.clock = clock
        self.started, self.start = clock(), start
        self.next_draw = self.started + self.every
        self.drawn = False

    def __call__(self, done):
        if not self.enabled:
            return
        if self.tty and self.drawn and done % self.spe == 0:
            self.stream.write('\r\033[K')  # the epoch's table comes next
            self.stream.flush()
            self.drawn = False
            return
        now = self.clock()
        if now < self.next_draw:
            return
        self.next_draw = now + self.every
        line = self.line(done, now)
        if self.tty:
            self.stream.write('\r' + line + '\033[K')
            self.drawn = True
        else:
            self.stream.write(line + '\n')
        self.stream.flush()

    def line(self, done, now=None):
        """The display's text after ``done`` steps."""
        now = self.clock() if now is None else now
        rate = (done - self.start) / max(now - self.started, 1e-9)
        epoch = min(done // self.spe + 1, self.total // self.spe)
        in_epoch = done - (epoch - 1) * self.spe
        returns = self.logger.epoch_dict.get('EpRet', []) if self.logger is not None else []
        parts = ['epoch %d/%d' % (epoch, self.total // self.spe),
                 'step %d/%d (%d/%d)' % (in_epoch, self.spe, done, self.total),
                 '%.0f steps/s' % rate,
                 'episodes %d' % len(returns)]
        if returns:
            parts[-1] += ', last return %.4g' % float(returns[-1])
        if rate > 0:
            parts.append('%s left' % _duration((self.total - done) / rate))
        return ' | '.join(parts)

    def finish(self):
        """Erase the display and say where the results are."""
        if self.enabled and self.tty and self.drawn:
            self.stream.write('\r\033[K')
            self.stream.flush()
        print(results_summary(self.logger.output_dir), flush=True)


def results_summary(run_dir):
    """Where a finished run's results are, and the commands that read them."""
    from spinup_tf.utils.run_folder import MODEL_DIR, PROGRESS_FILE
    lines = ['Run folder: %s' % run_dir,
             '  model:    %s  (python run.py test_policy %s)'
             % (osp.join(run_dir, MODEL_DIR), run_dir),
             '  progress: %s  (python run.py plot %s)'
             % (osp.join(run_dir, PROGRESS_FILE), run_dir)]
    best = osp.join(run_dir, MODEL_DIR.rstrip('/') + '_best')
    if osp.isdir(best):
        lines.insert(2, '  best:     %s  (python run.py test_policy %s --best)'
                     % (best, run_dir))
    return '\n'.join(lines)


def short_config(config, path=None):
    """One line for the start of a run: the algorithm, the env, and every hyperparameter
    whose value is not the algorithm's default (the full config is in ``config.json``)."""
    config = dict(config)
    algo, env = config.pop('algo', None), config.pop('env_id', None)
    defaults = {}
    if algo is not None:
        try:
            from spinup_tf.utils.flags import algorithm_parameters as parameters
            defaults = {k: p.default for k, p in parameters(algo).items()}
        except (KeyError, LookupError, ValueError, OSError):
            defaults = {}
    skip = {'env_fn', 'logger_kwargs', 'exp_name', 'actor_critic'}
    changed = []
    for key in sorted(config):
        if key in skip or key not in defaults and defaults:
            continue
        value, default = config[key], defaults.get(key, object())
        if value == default or (default in (None, {}) and value in (None, {})):
            continue
        changed.append('%s=%s' % (key, _short(value)))
    env_kwargs = (config.get('env_fn') or {}).get('env_kwargs') \
        if isinstance(config.get('env_fn'), dict) else None
    head = ' '.join(str(x) for x in (algo, env) if x)
    if env_kwargs:
        head += ' %s' % _short(env_kwargs)
    text = 'Config: %s%s' % (head, (' | ' + ', '.join(changed)) if changed else
                             ' | all defaults')
    if path is not None:
        text += '  (full: %s)' % path
    return text


def _short(value):
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + '...'
