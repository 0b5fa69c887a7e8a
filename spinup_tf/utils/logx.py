"""Experiment logging, Spinning Up style.

``Logger`` writes ``progress.txt`` (tab separated, header once, one row per epoch, flushed each
epoch), ``config.json`` and a TF SavedModel of the policy in ``tf1_save/`` (with
``model_info.json``, the JSON map of named inputs and outputs). ``EpochLogger`` adds
``store(...)`` during an epoch and ``log_tabular(key, with_min_and_max=..., average_only=...)``
at its end.

Nothing is pickled: the config is JSON, the model is a SavedModel, and an environment is
recorded by its gymnasium id only, so a policy can be run again from its folder alone.
"""
import json
import os
import os.path as osp
import sys
import time

import numpy as np

from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.run_folder import (PROGRESS_FILE, CONFIG_FILE, MODEL_DIR,  # noqa: F401
                                        MODEL_INFO_FILE)

color2num = dict(gray=30, red=31, green=32, yellow=33, blue=34, magenta=35, cyan=36,
                 white=37, crimson=38)


def colorize(string, color, bold=False, highlight=False):
    """Wrap ``string`` in ANSI colour codes (only when stdout is a terminal)."""
    if not sys.stdout.isatty():
        return string
    num = color2num[color] + (10 if highlight else 0)
    attr = [str(num)] + (['1'] if bold else [])
    return '\x1b[%sm%s\x1b[0m' % (';'.join(attr), string)


def convert_json(obj):
    """Turn ``obj`` into something ``json.dump`` accepts, keeping as much structure as possible.

    Callables become their qualified name; an env factory with an ``env_id`` attribute
    becomes ``{"env_id": ...}``; other objects become their ``__dict__`` or ``str``.
    """
    if is_json_serializable(obj):
        return obj
    if isinstance(obj, dict):
        return {str(k): convert_json(v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return [convert_json(x) for x in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if hasattr(obj, 'env_id'):
        return {'env_id': obj.env_id, 'env_kwargs': convert_json(getattr(obj, 'kwargs', {}))}
    if hasattr(obj, '__name__') and not ('lambda' in obj.__name__):
        return getattr(obj, '__module__', '') + '.' + obj.__qualname__ \
            if hasattr(obj, '__qualname__') else obj.__name__
    return str(obj)


def is_json_serializable(v):
    try:
        json.dumps(v)
        return True
    except (TypeError, ValueError, OverflowError):
        return False


def statistics_scalar(x, with_min_and_max=False):
    """Mean and std (and min, max) of a flat array of numbers."""
    x = np.asarray(x, dtype=np.float64).ravel()
    mean = float(np.mean(x))
    std = float(np.std(x))
    if with_min_and_max:
        return mean, std, float(np.min(x)), float(np.max(x))
    return mean, std


def _write_atomic(path, text):
    """Write ``text`` to ``path`` through a temporary file and a rename (never half-written,
    never through a symbolic link: ``spinup_tf.utils.safe_files.write_atomic``)."""
    from spinup_tf.utils.safe_files import write_atomic
    write_atomic(path, text)


class Logger:
    """Writes one row of diagnostics per epoch to ``output_dir/progress.txt``.

    Args:
        output_dir (str): run folder (created if needed). Defaults to
            ``/tmp/experiments/<time>``.
        output_fname (str): name of the progress file.
        exp_name (str): experiment name, recorded in ``config.json`` for the plotter.
        resume (bool): continue the run in ``output_dir`` from its checkpoint (see
            ``spinup_tf.utils.checkpoint``): progress rows are appended to the existing file, after
            ``truncate_progress`` dropped the rows the checkpoint does not cover.
        quiet (bool): print nothing (tests).
    """

    def __init__(self, output_dir=None, output_fname=PROGRESS_FILE, exp_name=None,
                 resume=False, quiet=False):
        self.output_dir = output_dir or '/tmp/experiments/%i' % int(time.time())
        os.makedirs(self.output_dir, exist_ok=True)
        self.output_path = osp.join(self.output_dir, output_fname)
        self.exp_name = exp_name
        self.quiet = quiet
        self.first_row = True
        self.log_headers = []
        self.log_current_row = {}
        self.output_file = None
        self.resume = resume
        self._append = resume and osp.exists(self.output_path)
        self.config = None
        self._saver_info = None
        # name -> object with state_dict() / load_state_dict(d) (e.g. the running statistics
        # of --normalize_obs): written into model_info.json and into checkpoints
        self.model_extras = {}

    # ---------------------------------------------------------------------------------------
    def log(self, msg, color='green'):
        """Print a coloured message to stdout."""
        if not self.quiet:
            print(colorize(msg, color, bold=True))

    def log_tabular(self, key, val):
        """Record the value of one diagnostic for the current epoch.

        The first epoch fixes the set and order of keys; later epochs must log exactly the
        keys of the first.
        """
        if self.first_row:
            if key in self.log_headers:
                raise KeyError('%s logged twice in one epoch' % key)
            self.log_headers.append(key)
        elif key not in self.log_headers:
            raise KeyError('%s was not logged in the first epoch; the header is fixed' % key)
        if key in self.log_current_row:
            raise KeyError('%s already set this epoch' % key)
        self.log_current_row[key] = val

    def save_config(self, config):
        """Write ``config`` (typically the algorithm's ``locals()``) as ``config.json``."""
        config = {k: v for k, v in dict(config).items() if k != 'logger'}
        config_json = convert_json(config)
        if self.exp_name is not None:
            config_json['exp_name'] = self.exp_name
        self.config = config_json
        self._write_config()

    def _write_config(self):
        text = json.dumps(self.config, separators=(',', ':\t'), indent=4, sort_keys=True)
        path = osp.join(self.output_dir, CONFIG_FILE)
        if not self.quiet:  # one line: what differs from the defaults; the rest is in the file
            from spinup_tf.utils.progress import short_config
            print(colorize(short_config(self.config, path), color='cyan', bold=True))
        _write_atomic(path, text)

    # ---------------------------------------------------------------------------------------
    def setup_tf_saver(self, sess, inputs, outputs):
        """Register what ``save_state`` writes as a SavedModel.

        Call it while the graph can still take new ops (before ``graph.finalize()``): it
        builds the one ``tf.train.Saver`` and the serving signature that every later save
        reuses, so saving never grows the graph.

        Args:
            sess: the ``tf.Session`` holding the variables.
            inputs (dict): name -> placeholder (e.g. ``{'x': x_ph, 'a': a_ph}``).
            outputs (dict): name -> tensor (e.g. ``{'pi': pi, 'q1': q1, 'q2': q2}``).
        """
        from spinup_tf.utils.tf1 import tf
        with sess.graph.as_default():
            saver = tf.train.Saver(var_list=tf.global_variables(), max_to_keep=None,
                                   allow_empty=True)
            signature = tf.saved_model.signature_def_utils.predict_signature_def(
                inputs=inputs, outputs=outputs)
            trainable = tf.trainable_variables()
            all_finite = tf.reduce_all([tf.reduce_all(tf.is_finite(v)) for v in trainable]) \
                if trainable else tf.constant(True)
        self._saver_info = dict(session=sess, inputs=dict(inputs), outputs=dict(outputs),
                                saver=saver, signature=signature, all_finite=all_finite)

    @property
    def session(self):
        """The session registered by ``setup_tf_saver`` (None before)."""
        return self._saver_info['session'] if self._saver_info else None

    @property
    def tf_saver(self):
        """The ``tf.train.Saver`` over all global variables (optimizer state included);
        None when no model was registered."""
        return self._saver_info['saver'] if self._saver_info else None

    def params_finite(self):
        """True when every trainable variable holds only finite numbers (or no model)."""
        if self._saver_info is None:
            return True
        info = self._saver_info
        if not callable(info['all_finite']):  # made at the first check, not at start-up
            info['all_finite'] = info['session'].make_callable(info['all_finite'])
        return bool(info['all_finite']())

    def save_state(self, state_dict=None, itr=None, suffix=''):
        """Save the registered model (and a small JSON-serialisable ``state_dict``).

        The SavedModel goes to ``tf1_save/`` (``tf1_save{itr}/`` when ``itr`` is given,
        ``tf1_save{suffix}/`` with a ``suffix`` such as ``'_best'``), with ``model_extras``'
        state in its ``model_info.json``,
        written to a temporary folder first and renamed into place, so an interrupted save
        never leaves a broken model behind.
        """
        if self._saver_info is None:
            raise RuntimeError('call setup_tf_saver before save_state')
        from spinup_tf.utils.tf1 import tf
        info = self._saver_info
        fpath = osp.join(self.output_dir, MODEL_DIR + ('%d' % itr if itr is not None else '')
                         + suffix)
        tmp = fpath + '.tmp'
        old = fpath + '.old'
        from spinup_tf.utils.safe_files import remove_any
        for p in (tmp, old):  # leftovers of any kind (a FIFO is removed, never opened)
            remove_any(p)
        sess = info['session']
        if sess.graph.finalized and info.get('saved_model_pb') is not None:
            # The graph cannot change once finalized, so neither can saved_model.pb (the
            # graph, the signature, the saver's names): write the first save's bytes again
            # and only the variables anew, as the Builder does.
            os.makedirs(osp.join(tmp, 'variables'))
            info['saver'].save(sess, osp.join(tmp, 'variables', 'variables'),
                               write_meta_graph=False, write_state=False)
            with open(osp.join(tmp, 'saved_model.pb'), 'xb') as f:  # tmp is new
                f.write(info['saved_model_pb'])
        else:
            with sess.graph.as_default():  # the SavedModel exports the *default* graph
                builder = tf.saved_model.Builder(tmp)
                builder.add_meta_graph_and_variables(
                    sess, [tf.saved_model.tag_constants.SERVING],
                    signature_def_map={'serving_default': info['signature']},
                    saver=info['saver'], strip_default_attrs=True)
                builder.save()
            if sess.graph.finalized:
                with open(osp.join(tmp, 'saved_model.pb'), 'rb') as f:
                    info['saved_model_pb'] = f.read()
        model_info = dict(
            inputs={k: v.name for k, v in info['inputs'].items()},
            outputs={k: v.name for k, v in info['outputs'].items()},
        )
        if state_dict:
            model_info['state'] = convert_json(state_dict)
        for key, extra in self.model_extras.items():
            model_info[key] = extra.state_dict()
        _write_atomic(osp.join(tmp, MODEL_INFO_FILE), json.dumps(model_info, indent=2))
        if osp.exists(fpath):
            os.replace(fpath, old)
        os.replace(tmp, fpath)
        if osp.lexists(old):
            remove_any(old)

    # ---------------------------------------------------------------------------------------
    def dump_tabular(self):
        """Print the epoch's diagnostics as a boxed table and append a row to progress.txt.

        The row is written with one ``write`` call and flushed, so the file always ends with
        a complete line.
        """
        missing = [k for k in self.log_headers if k not in self.log_current_row]
        if missing:
            raise KeyError('keys logged in the first epoch but not now: %s' % missing)
        vals = [self.log_current_row[k] for k in self.log_headers]
        if not self.quiet:
            key_lens = [len(key) for key in self.log_headers]
            max_key_len = max(15, max(key_lens))
            keystr = '%' + '%d' % max_key_len
            fmt = '| ' + keystr + 's | %15s |'
            n_slashes = 22 + max_key_len
            print('-' * n_slashes)
            for key, val in zip(self.log_headers, vals):
                valstr = '%8.3g' % val if hasattr(val, '__float__') else val
                print(fmt % (key, valstr))
            print('-' * n_slashes, flush=True)
        self._open_output(self.log_headers)
        text = ''
        if self.first_row and not self._append:
            text += '\t'.join(self.log_headers) + '\n'
        text += '\t'.join(map(_format_value, vals)) + '\n'
        self.output_file.write(text)
        self.output_file.flush()
        if self._tensorboard is not None:
            self._write_summaries(dict(zip(self.log_headers, vals)))
        self.log_current_row.clear()
        self.first_row = False

    def _open_output(self, headers):
        if self.output_file is not None:
            return
        from spinup_tf.utils.progress_file import Lines
        from spinup_tf.utils.safe_files import open_for_append
        if self._append:
            old_header = None
            with Lines(self.output_path) as lines:
                for _, line in lines:
                    old_header = line.split('\t')
                    break
            if old_header is None and lines.partial is not None:
                old_header = lines.partial.split('\t')
            if old_header != headers:
                raise ValueError('cannot append to %s: its columns differ' % self.output_path)
        self.output_file = open_for_append(self.output_path, truncate=not self._append)

    def truncate_progress(self, last_epoch):
        """Keep the header and the complete rows with ``Epoch <= last_epoch``; drop the rest.

        Used on resume: rows written after the checkpoint (and a half-written last line
        from a killed process) are removed, so the resumed run neither repeats nor skips an
        epoch. The file is rewritten atomically.
        """
        from spinup_tf.utils.progress_file import Lines
        if not osp.lexists(self.output_path):
            self._append = False
            return
        kept, header, col = [], None, None
        with Lines(self.output_path) as lines:  # complete lines: a half-written last is not
            for i, line in lines:
                if header is None:
                    header = line.split('\t')
                    if 'Epoch' not in header:
                        raise UserInputError('%s has no Epoch column; cannot resume'
                                             % self.output_path)
                    col = header.index('Epoch')
                    kept.append(line)
                    continue
                self._keep_row(kept, i, line, header, col, last_epoch)
        if header is None:
            self._append = False
            return
        _write_atomic(self.output_path, '\n'.join(kept) + '\n')
        self._append = True

    def _keep_row(self, kept, i, line, header, col, last_epoch):
        """Append ``line`` (line ``i`` of the progress file) to ``kept`` when it is a row of
        an epoch up to ``last_epoch``; refuse a line that is not a row of this run."""
        from spinup_tf.utils.progress_file import split_row
        cells = split_row(line, len(header))
        try:
            epoch = float(cells[col]) if cells is not None else None
        except ValueError:
            epoch = None
        if epoch is None:  # a whole line that is not a row: the file was edited or mixed
            cells = cells or line.split('\t', len(header) + 1)
            raise UserInputError('%s line %d is not a progress row of this run (%s cells, '
                                 'Epoch %r); nothing was changed: fix or remove that line, '
                                 'then resume' % (self.output_path, i, line.count('\t') + 1,
                                                  cells[col][:24] if len(cells) > col else ''))
        if epoch <= last_epoch:
            kept.append(line)

    def close(self):
        """Close the progress file (and the TensorBoard writer)."""
        if self.output_file is not None:
            self.output_file.close()
            self.output_file = None
        if self._tensorboard is not None:
            self._tensorboard.close()
            self._tensorboard = None

    # ---- TensorBoard ----------------------------------------------------------------------
    _tensorboard = None

    def enable_tensorboard(self, graph=None):
        """Mirror every numeric column of every row to TensorBoard scalars in
        ``<output_dir>/tensorboard/``, with ``TotalEnvInteracts`` (else ``Epoch``) as the step,
        and write ``graph``. Any algorithm can switch it on (``--tensorboard True``)."""
        from spinup_tf.utils.tf1 import tf
        self._tensorboard = tf.summary.FileWriter(osp.join(self.output_dir, 'tensorboard'),
                                                  graph)

    def _write_summaries(self, row):
        from spinup_tf.utils.tf1 import tf
        step = row.get('TotalEnvInteracts', row.get('Epoch', 0))
        values = [tf.Summary.Value(tag=key, simple_value=float(val)) for key, val in row.items()
                  if isinstance(val, (int, float, np.integer, np.floating))
                  and not isinstance(val, bool)]
        self._tensorboard.add_summary(tf.Summary(value=values), int(step))
        self._tensorboard.flush()


def _format_value(val):
    if isinstance(val, (bool, np.bool_)):
        return str(int(val))
    if isinstance(val, (int, np.integer)):
        return str(int(val))
    if isinstance(val, (float, np.floating)):
        return repr(float(val))
    return str(val)


class EpochLogger(Logger):
    """A Logger that averages diagnostics stored during an epoch.

    During the epoch call ``store(LossQ=..., Q1Vals=...)`` as often as you like; at its end
    ``log_tabular('Q1Vals', with_min_and_max=True)`` logs AverageQ1Vals, StdQ1Vals, MaxQ1Vals
    and MinQ1Vals computed over everything stored, and forgets them.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.epoch_dict = dict()
        self.last_stats = dict()  # key -> (mean, std, min, max) of its last log_tabular

    def store(self, **kwargs):
        """Save values (scalars or arrays) of diagnostics for this epoch."""
        for k, v in kwargs.items():
            self.epoch_dict.setdefault(k, []).append(v)

    def log_tabular(self, key, val=None, with_min_and_max=False, average_only=False):
        """Log a value, or the statistics of a stored diagnostic.

        Args:
            key (str): name of the diagnostic; with ``val=None`` it must have been stored.
            val: value to log directly (then ``key`` is logged as is).
            with_min_and_max (bool): also log Max<key> and Min<key>.
            average_only (bool): log only ``key`` (the mean), no Average/Std prefix.
        """
        if val is not None:
            super().log_tabular(key, val)
            return
        if key not in self.epoch_dict or len(self.epoch_dict[key]) == 0:
            # Nothing stored this epoch (e.g. no episode finished): log NaN, keep the columns.
            stats = (np.nan,) * (4 if with_min_and_max else 2)
            self.last_stats[key] = (np.nan,) * 4
        else:
            v = self.epoch_dict[key]
            vals = np.concatenate([np.ravel(x) for x in v])
            stats = statistics_scalar(vals, with_min_and_max=with_min_and_max)
            self.last_stats[key] = statistics_scalar(vals, with_min_and_max=True)
        super().log_tabular(key if average_only else 'Average' + key, stats[0])
        if not average_only:
            super().log_tabular('Std' + key, stats[1])
        if with_min_and_max:
            super().log_tabular('Max' + key, stats[3])
            super().log_tabular('Min' + key, stats[2])
        self.epoch_dict[key] = []

    def get_stats(self, key):
        """Mean, std, min, max of a stored diagnostic (without forgetting it)."""
        v = self.epoch_dict.get(key, [])
        if len(v) == 0:
            return (np.nan,) * 4
        vals = np.concatenate([np.ravel(x) for x in v])
        return statistics_scalar(vals, with_min_and_max=True)


def setup_logger_kwargs(exp_name, seed=None, data_dir=None, datestamp=False):
    """Logger kwargs for a run: ``data_dir/exp_name/exp_name_s{seed}`` (Spinning Up's layout).

    With ``datestamp`` the folders get date/time prefixes so that runs never collide.
    """
    from spinup_tf.utils.errors import UserInputError
    if not exp_name or exp_name in ('.', '..') or '/' in exp_name or osp.sep in exp_name:
        raise UserInputError('--exp_name must be a folder name inside --data_dir (no "/" and '
                             'not "." or ".."), got %r' % (exp_name,))
    data_dir = data_dir or osp.join(os.getcwd(), 'data')
    ymd_time = time.strftime('%Y-%m-%d_') if datestamp else ''
    relpath = ymd_time + exp_name
    if seed is not None:
        if datestamp:
            hms_time = time.strftime('%Y-%m-%d_%H-%M-%S')
            subfolder = hms_time + '-' + exp_name + '_s' + str(seed)
        else:
            subfolder = exp_name + '_s' + str(seed)
        relpath = osp.join(relpath, subfolder)
    return dict(output_dir=osp.join(data_dir, relpath), exp_name=exp_name)
