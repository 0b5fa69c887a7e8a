"""What a checkpoint must agree with: recorded when it is saved, proved before a resume
writes anything.

A checkpoint (``spinup_tf.utils.checkpoint``) is one instant of a run, and ``resume`` puts
it together with two other files of the folder: ``config.json``, which says what to build,
and ``progress.txt``, to which it appends. Each save records both in ``state.json``
(:func:`make_records`):

* ``progress``: how many rows ``progress.txt`` held (``rows``) and the SHA-256 of its bytes up
  to the end of the last of them (the header included);
* ``config``: the SHA-256 of the keys of ``config.json`` that shape the run (all but
  :data:`NOT_SHAPING`), those keys' values (so that a refusal can name what changed) and the
  algorithm and env id.

:func:`verify_records` then refuses, before anything is written, a folder whose files no
longer agree with its checkpoint: ``config.json`` edited (another algorithm, env,
``steps_per_epoch``...), ``progress.txt`` truncated, cut down to its header, with rows removed
or edited, or with rows of another run after the checkpoint's; and :func:`check_counters`
refuses an epoch or step outside the run's budget. ``epochs`` is not a shaping key: raising
it in ``config.json`` lets a finished run be resumed for more epochs.
"""
import hashlib
import json
import os.path as osp

from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.safe_files import JSON_LIMIT, read_json

CONFIG_FILE = 'config.json'
PROGRESS_FILE = 'progress.txt'
NOT_SHAPING = ('epochs', 'save_freq', 'exp_name', 'logger_kwargs', 'preset')
"""Keys of ``config.json`` a resume may see changed: the budget in epochs, how often it
saves, and the names and folder (a run folder that was moved or shared keeps its checkpoint
valid)."""


class RecordError(UserInputError):
    """The run folder's files disagree with its checkpoint; nothing was changed."""


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def shaping_config(config):
    """The keys of ``config`` that shape the run (see :data:`NOT_SHAPING`)."""
    return {k: v for k, v in config.items() if k not in NOT_SHAPING}


def config_digest(config):
    """SHA-256 of :func:`shaping_config`, as canonical JSON."""
    text = json.dumps(shaping_config(config), sort_keys=True, separators=(',', ':'))
    return _sha256(text.encode('utf-8'))


def read_config(output_dir):
    """``config.json`` of ``output_dir`` as a dict, or None when there is none."""
    path = osp.join(output_dir, CONFIG_FILE)
    if not osp.lexists(path):
        return None
    return read_json(path, JSON_LIMIT)


class ProgressScan:
    """One streamed pass over ``progress.txt`` (``spinup_tf.utils.progress_file``, the
    project's one reader: regular file, no link, bounded): ``exists``, ``rows`` (complete
    rows after the header), ``digest`` (SHA-256 of the header and the first ``keep`` rows
    with their newlines; every row when ``keep`` is None), ``header`` (its cells) and
    ``on_later(lineno, cells, header)`` is called for each row after the first ``keep``
    (``keep`` given), as it is read. A last line without its newline (a run killed while
    writing it) is not a row."""

    def __init__(self, output_dir, keep=None, on_later=None):
        from spinup_tf.utils.progress_file import Lines
        path = osp.join(output_dir, PROGRESS_FILE)
        self.exists = osp.lexists(path)
        self.rows, self.header = 0, None
        sha = hashlib.sha256()
        if not self.exists:
            self.digest = _sha256(b'')
            return
        with Lines(path) as lines:
            for lineno, line in lines:
                if self.header is None:
                    self.header = line.split('\t')
                    if keep != 0:
                        sha.update((line + '\n').encode('utf-8'))
                    continue
                self.rows += 1
                if keep is None or self.rows <= keep:
                    sha.update((line + '\n').encode('utf-8'))
                elif on_later is not None:
                    on_later(lineno, line.split('\t'), self.header)
        kept = self.rows if keep is None else min(keep, self.rows)
        self.digest = sha.hexdigest() if kept else _sha256(b'')


def make_records(output_dir):
    """The records a checkpoint of ``output_dir`` saves now (see the module docstring)."""
    scan = ProgressScan(output_dir)
    config = read_config(output_dir)
    config_record = None
    if config is not None:
        config_record = dict(sha256=config_digest(config), algo=config.get('algo'),
                             env_id=config.get('env_id'), values=shaping_config(config))
    return dict(progress=dict(rows=scan.rows, sha256=scan.digest), config=config_record)


def _what(record):
    return '%s run on %s' % (record.get('algo'), record.get('env_id'))


def _config_changes(saved, now):
    """``'steps_per_epoch is 100, was 600; ...'`` for the keys that differ."""
    out = []
    for key in sorted(set(saved) | set(now)):
        if key not in now:
            out.append('%s is missing (was %s)' % (key, json.dumps(saved[key])))
        elif key not in saved:
            out.append('%s was added (%s)' % (key, json.dumps(now[key])))
        elif saved[key] != now[key]:
            out.append('%s is %s, was %s' % (key, json.dumps(now[key]), json.dumps(saved[key])))
    text = '; '.join(out[:4]) + ('; and %d more' % (len(out) - 4) if len(out) > 4 else '')
    return text[:400]


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def verify_records(output_dir, records, epoch):
    """``RecordError`` unless ``config.json`` and ``progress.txt`` of ``output_dir`` agree
    with ``records`` (a checkpoint's, saved after epoch ``epoch``). Reads only."""
    where = osp.join(output_dir, 'checkpoint')
    if not isinstance(records, dict) or not isinstance(records.get('progress'), dict):
        raise RecordError('the checkpoint in %s does not record the progress rows and config '
                          'it was saved with (made by an older version, or edited), so its '
                          'agreement with the folder cannot be checked; it cannot be resumed'
                          % where)
    _verify_config(output_dir, records.get('config'))
    _verify_progress(output_dir, records['progress'], epoch)


def _verify_config(output_dir, saved):
    config = read_config(output_dir)
    path = osp.join(output_dir, CONFIG_FILE)
    if saved is None and config is None:
        return
    if config is None:
        raise RecordError('%s is missing, but the checkpoint was saved with one; the run '
                          'cannot be resumed' % path)
    if not isinstance(saved, dict) or not isinstance(saved.get('values'), dict):
        raise RecordError('%s exists, but the checkpoint records no config (edited?); the '
                          'run cannot be resumed' % path)
    now = dict(algo=config.get('algo'), env_id=config.get('env_id'))
    if (saved.get('algo'), saved.get('env_id')) != (now['algo'], now['env_id']):
        raise RecordError('the checkpoint was saved by a %s, but %s now names a %s; it '
                          'cannot be resumed' % (_what(saved), path, _what(now)))
    if config_digest(config) != saved.get('sha256'):
        changes = _config_changes(saved['values'], shaping_config(config))
        raise RecordError('%s differs from the config the checkpoint was saved with (%s); '
                          'resuming would mix two different runs, so nothing was changed'
                          % (path, changes or 'edited'))


def _verify_progress(output_dir, saved, epoch):
    path = osp.join(output_dir, PROGRESS_FILE)
    rows = saved.get('rows')
    if not _is_int(rows) or rows < 0 or not isinstance(saved.get('sha256'), str):
        raise RecordError('the checkpoint\'s record of %s is malformed; the run cannot be '
                          'resumed' % path)

    def later_row(i, cells, header):
        """A row after the checkpoint's must be a later epoch (else rows of another run are
        mixed in); a line that is not a row is left to ``truncate_progress``, which refuses
        it, and counters to be refused to ``check_counters``."""
        col = header.index('Epoch') if 'Epoch' in header else None
        try:
            later = float(cells[col]) if col is not None and len(cells) == len(header) else None
        except ValueError:
            later = None
        if later is not None and epoch is not None and not later > epoch:
            raise RecordError('%s line %d (Epoch %s) follows the checkpoint\'s %d rows but is '
                              'not a later epoch than its %d: rows of another run are mixed '
                              'in; nothing was changed' % (path, i, cells[col][:24], rows, epoch))

    scan = ProgressScan(output_dir, keep=rows)
    held = scan.rows
    if held < rows:
        what = ('is missing' if not scan.exists else 'is empty' if scan.header is None
                else 'holds only its header' if held == 0 else 'holds %d rows' % held)
        raise RecordError('%s %s, but the checkpoint was saved after its first %d rows: rows '
                          'were removed or the file was truncated; resuming would leave a gap, '
                          'so nothing was changed' % (path, what, rows))
    if scan.digest != saved['sha256']:
        raise RecordError('the first %d rows of %s are not the ones the checkpoint was saved '
                          'with (edited, reordered or from another run); nothing was changed'
                          % (rows, path))
    ProgressScan(output_dir, keep=rows, on_later=later_row)  # the rows after them


def check_counters(output_dir, counters, loop=None):
    """``RecordError`` unless the checkpoint's ``counters`` (finished ``epoch``, step ``t``)
    lie inside the budget of ``config.json``: ``0 <= epoch <= epochs``; ``t`` counts all
    steps (``loop='off_policy'``: ``epoch * spe <= t <= (epoch + 1) * spe``) or the steps of
    the open epoch (``'on_policy'``: ``0 <= t <= spe``); with ``loop`` None either holds."""
    where = osp.join(output_dir, 'checkpoint', 'state.json')
    if not isinstance(counters, dict):
        raise RecordError('%s holds no loop counters; the run cannot be resumed' % where)
    epoch, t = counters.get('epoch'), counters.get('t')
    if not (_is_int(epoch) and _is_int(t)):
        raise RecordError('%s: the epoch and step counters must be integers, got epoch %r and '
                          'step %r; the run cannot be resumed' % (where, epoch, t))
    elapsed = counters.get('elapsed', 0.0)
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)) or \
            not elapsed >= 0 or elapsed == float('inf'):
        raise RecordError('%s: elapsed time %r is not a number of seconds' % (where, elapsed))
    config = read_config(output_dir)
    if config is None:
        return
    epochs, spe = config.get('epochs'), config.get('steps_per_epoch')
    if not (_is_int(epochs) and _is_int(spe) and epochs > 0 and spe > 0):
        raise RecordError('%s: epochs and steps_per_epoch must be positive integers, got %r '
                          'and %r' % (osp.join(output_dir, CONFIG_FILE), epochs, spe))
    if not 0 <= epoch <= epochs:
        raise RecordError('%s: epoch %d is outside the run\'s 0..%d epochs; the run cannot be '
                          'resumed' % (where, epoch, epochs))
    total = (epoch * spe <= t <= min((epoch + 1) * spe, epochs * spe))
    within = 0 <= t <= spe
    ok = {'off_policy': total, 'on_policy': within}.get(loop, total or within)
    if not ok:
        span = ('%d..%d' % (epoch * spe, min((epoch + 1) * spe, epochs * spe))
                if loop == 'off_policy' else '0..%d' % spe)
        raise RecordError('%s: step %d does not fit epoch %d of a run of %d steps per epoch '
                          '(expected %s); the run cannot be resumed'
                          % (where, t, epoch, spe, span))
