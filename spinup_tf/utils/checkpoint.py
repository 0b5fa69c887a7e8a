"""Checkpoints that let a killed run continue: ``python run.py resume DIR``.

A checkpoint lives in ``DIR/checkpoint/`` and holds

* ``variables.*`` — every global variable of the graph through ``tf.train.Saver``: networks,
  target networks and the optimizers' slots and step counters;
* ``state.json`` — the loop's counters (next step, finished epochs, elapsed time), numpy's
  global RNG state, the RNG states of each env and its action space, and the logger's
  ``model_extras`` (the running statistics of ``--normalize_obs`` / ``--normalize_rew``);
* ``arrays.npz`` (compressed) — the experience buffer (for off-policy runs the filled part
  of the replay buffer) and the diagnostics already stored in the current epoch.

**Crash safety.** A save writes ``checkpoint.tmp/`` completely (``state.json`` last, by
rename, so its presence marks a complete copy; every file is flushed to disk), then moves the
old copy to ``checkpoint.old/``, renames ``checkpoint.tmp/`` into place and deletes the old
one. Whatever instant a crash (or ``kill -9``, or a full disk) hits, one complete copy is
left: ``checkpoint/`` if it is complete, else the complete ``checkpoint.tmp/`` (newer), else
``checkpoint.old/``; :func:`recover` renames it back into place before a resume reads it.
Nothing is pickled.

**Consistency.** Each save also records the ``progress.txt`` rows and the ``config.json``
it goes with (``spinup_tf.utils.run_records``). :func:`verify` proves, reading only, that the
folder still agrees with the newest complete copy (its records, its counters inside the
run's budget, its RNG states and episode well-formed) before :meth:`Checkpointer.restore`
(or ``run.py resume``) changes anything; a folder that does not gets one ``error:`` line.

**Exact resume.** A resumed run repeats the uninterrupted one: the in-graph random draws
come from counters in the checkpointed variables (``spinup_tf.utils.tf1.draw_seed``), and the
loops rebuild the open episode by replaying its reset and actions
(``spinup_tf.utils.episode_replay``), so progress.txt is the same apart from ``Time``.
"""
import json
import os
import os.path as osp
import zipfile

import numpy as np

from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.run_records import RecordError, check_counters, make_records, \
    verify_records
from spinup_tf.utils.safe_files import read_json

CHECKPOINT_DIR = 'checkpoint'


class CheckpointError(UserInputError):
    """A checkpoint is missing, incomplete or does not fit the run (one ``error:`` line)."""


STATE_FILE = 'state.json'   # written last: a folder with it is a complete checkpoint
_fault = {'hook': None}     # tests: called with each file operation's name before it runs


def _op(name):
    if _fault['hook'] is not None:
        _fault['hook'](name)


def _complete(path):
    """Whether ``path`` is a real folder (not a link) holding a regular ``state.json``."""
    import stat
    try:
        return (stat.S_ISDIR(os.lstat(path).st_mode)
                and stat.S_ISREG(os.lstat(osp.join(path, STATE_FILE)).st_mode))
    except OSError:
        return False


def _copies(output_dir):
    base = osp.join(output_dir, CHECKPOINT_DIR)
    return base, base + '.tmp', base + '.old'


def has_checkpoint(output_dir):
    """True when a complete copy exists (in place, or left by a save that crashed)."""
    return complete_copy(output_dir) is not None


def complete_copy(output_dir):
    """The copy :func:`recover` puts in place: ``checkpoint/`` if complete, else the newer
    ``checkpoint.tmp/``, else ``checkpoint.old/``; None when none is complete."""
    for candidate in _copies(output_dir):
        if _complete(candidate):
            return candidate
    return None


def recover(output_dir):
    """Put the newest complete copy at ``checkpoint/`` and delete the others (after a save
    that crashed half way). Call it only while holding the run folder."""
    from spinup_tf.utils.safe_files import remove_any
    path, tmp, old = _copies(output_dir)
    candidate = complete_copy(output_dir)
    if candidate is not None and candidate != path:
        remove_any(path)
        os.replace(candidate, path)
    for leftover in (tmp, old):  # of any kind: a FIFO there is removed, never opened
        remove_any(leftover)


def _fsync_tree(path):
    """Flush every file under ``path``, and the folder itself, to disk."""
    for name in os.listdir(path):
        fd = os.open(osp.join(path, name), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    _fsync_dir(path)


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _np_rng_state_to_json():
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return [name, keys.tolist(), int(pos), int(has_gauss), float(cached)]


def _np_rng_state_from_json(s):
    name, keys, pos, has_gauss, cached = s
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))


def _generator_of(obj, attr):
    gen = getattr(obj, attr, None)
    return gen if isinstance(gen, np.random.Generator) else None


def _env_rng_states(envs):
    """JSON-able bit-generator states of each env and of its action space."""
    out = []
    for env in envs:
        entry = {}
        gen = _generator_of(env.unwrapped, '_np_random')
        if gen is not None:
            entry['env'] = gen.bit_generator.state
        gen = _generator_of(env.action_space, '_np_random')
        if gen is not None:
            entry['action_space'] = gen.bit_generator.state
        out.append(entry)
    return out


def _set_env_rng_states(envs, states):
    for env, entry in zip(envs, states):
        if 'env' in entry:
            gen = _generator_of(env.unwrapped, '_np_random')
            if gen is None:
                env.reset()
                gen = env.unwrapped.np_random
            gen.bit_generator.state = entry['env']
        if 'action_space' in entry:
            env.action_space.np_random.bit_generator.state = entry['action_space']


BIT_GENERATORS = ('PCG64', 'PCG64DXSM', 'MT19937', 'Philox', 'SFC64')


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def verify(output_dir, loop=None, action_shape=None):
    """Prove, reading only, that ``output_dir`` can be resumed from its newest complete
    checkpoint copy, and return that copy's ``state.json`` contents.

    ``CheckpointError`` (one line) when it cannot: no complete copy, an unreadable or
    malformed ``state.json``, records that disagree with ``config.json`` or ``progress.txt``
    (``spinup_tf.utils.run_records``), counters outside the run's budget (``loop``:
    ``'off_policy'`` or ``'on_policy'``, for the stricter check of the step), RNG states that
    numpy would not take, an open episode that is malformed (with ``action_shape``: whose
    actions are not of that shape) or longer than ``max_ep_len``, or compressed arrays
    claiming more memory than the machine has.
    """
    copy = complete_copy(output_dir)
    if copy is None:
        raise CheckpointError('no checkpoint in %s (runs save one every save_freq epochs); '
                              'nothing to resume' % output_dir)
    path = osp.join(copy, STATE_FILE)
    try:
        state = read_json(path)
    except UserInputError as e:
        raise CheckpointError('the checkpoint in %s is unreadable, truncated or corrupt (%s)'
                              % (copy, e)) from None
    counters = state.get('counters')
    epoch = counters.get('epoch') if isinstance(counters, dict) else None
    try:
        verify_records(output_dir, state.get('records'), epoch if _is_int(epoch) else None)
        check_counters(output_dir, counters, loop)
    except RecordError as e:
        raise CheckpointError(str(e)) from None
    problem = (_rng_problem(state) or _episode_problem(counters, output_dir, action_shape)
               or _noise_problem(counters.get('noise')) or _arrays_problem(copy)
               or _variables_problem(copy))
    if problem:
        raise CheckpointError('the checkpoint in %s cannot be resumed: %s' % (copy, problem))
    return state


def _rng_problem(state):
    """Why numpy would refuse the saved RNG states (None when it takes them)."""
    try:
        name, keys, pos, has_gauss, cached = state['numpy_rng']
        np.random.RandomState().set_state((name, np.asarray(keys, dtype=np.uint32), pos,
                                           has_gauss, cached))
        entries = state['env_rngs']
        if not isinstance(entries, list):
            raise TypeError('env_rngs is not a list')
        for entry in entries:
            if not isinstance(entry, dict) or set(entry) - {'env', 'action_space'}:
                raise TypeError('an env RNG entry is malformed')
            for value in entry.values():
                _check_bit_generator_state(value)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as e:
        return 'its RNG states are malformed (%s: %s)' % (type(e).__name__, str(e)[:200])
    return None


def _check_bit_generator_state(value):
    if not isinstance(value, dict) or value.get('bit_generator') not in BIT_GENERATORS:
        raise ValueError('unknown bit generator %r' % (value.get('bit_generator')
                                                       if isinstance(value, dict) else value,))
    getattr(np.random, value['bit_generator'])().state = value


def _episode_problem(counters, output_dir, action_shape):
    """Why the recorded open episode cannot be replayed (None when it can)."""
    episode = counters.get('episode')
    if episode is None:
        return None
    try:
        if not isinstance(episode, dict) or not isinstance(episode.get('actions'), list):
            raise TypeError('the open episode is not a dict with a list of actions')
        start = episode.get('start')
        if start is not None:
            if not isinstance(start, dict) or len(start) != 1 or \
                    not ('seed' in start and _is_int(start['seed']) and start['seed'] >= 0
                         or 'rng' in start):
                raise ValueError('its reset is neither a seed nor an RNG state')
            if 'rng' in start:
                _check_bit_generator_state(start['rng'])
        actions = episode['actions']
        config_path = osp.join(output_dir, 'config.json')
        max_len = read_json(config_path).get('max_ep_len') if osp.lexists(config_path) else None
        if _is_int(max_len) and len(actions) > max_len:
            raise ValueError('%d actions, more than max_ep_len %d' % (len(actions), max_len))
        if actions:
            dtype = np.dtype(episode.get('dtype'))
            if dtype.kind not in 'fiub':
                raise TypeError('actions of dtype %s' % dtype)
            a = np.asarray(actions, dtype=dtype)
            if a.dtype.kind == 'f' and not np.all(np.isfinite(a)):
                raise ValueError('non-finite actions')
            if action_shape is not None and a.shape[1:] != tuple(action_shape):
                raise ValueError('actions of shape %s, the env takes %s'
                                 % (a.shape[1:], tuple(action_shape)))
    except (ValueError, TypeError, OverflowError, UserInputError) as e:
        return 'its open episode is malformed (%s)' % str(e)[:200]
    return None


def _noise_problem(noise):
    """Why a saved exploration-noise state is malformed (None when it is not)."""
    if not noise:
        return None
    try:
        if not isinstance(noise, dict):
            raise TypeError('not a dict')
        for key, value in noise.items():
            if not key.isidentifier() or key.startswith('_') or not isinstance(value, dict):
                raise ValueError('entry %r' % key)
            if 'array' in value:
                if np.dtype(value['dtype']).kind not in 'fiub':
                    raise TypeError('dtype %r' % value['dtype'])
                np.asarray(value['array'], dtype=np.dtype(value['dtype']))
            elif set(value) != {'value'} or not (value['value'] is None or isinstance(
                    value['value'], (bool, int, float))):
                raise ValueError('entry %r' % key)
    except (ValueError, TypeError, KeyError, OverflowError) as e:
        return 'its exploration noise state is malformed (%s)' % str(e)[:200]
    return None


def _arrays_problem(copy):
    """Why ``arrays.npz`` cannot be loaded safely: unreadable, not a regular file, or
    decompressing to more memory than is available (None when fine)."""
    from spinup_tf.utils.budget import available_memory
    from spinup_tf.utils.safe_files import human_bytes, open_regular
    path = osp.join(copy, 'arrays.npz')
    try:
        os.close(open_regular(path))
        with zipfile.ZipFile(path) as z:
            claimed = sum(info.file_size for info in z.infolist())
    except FileNotFoundError:
        return 'arrays.npz is missing'
    except (OSError, zipfile.BadZipFile, UserInputError) as e:
        return 'arrays.npz is unreadable, truncated or corrupt (%s)' % str(e)[:200]
    available = available_memory()
    if available is not None and claimed > available:
        return ('arrays.npz would decompress to %s, more than the %s available'
                % (human_bytes(claimed), human_bytes(available)))
    return None


def _variables_problem(copy):
    """Why the saved variables cannot be read back (None when every tensor reads): an index
    TF cannot parse, shapes claiming more bytes than the data files hold, a tensor whose
    bytes fail to read (TF checks each one's CRC)."""
    prefix = osp.join(copy, 'variables')
    if not osp.lexists(prefix + '.index'):
        return None  # a run without a graph saver saves none (and restores none)
    from spinup_tf.utils.checkpoint_index import check_index
    try:  # every declared shape bounded before TensorFlow sees one (it aborts on some)
        check_index(prefix)
    except UserInputError as e:
        return 'its variables are truncated or corrupt (%s)' % str(e)[:300]
    from spinup_tf.utils.tf1 import tf
    try:
        held = sum(os.lstat(osp.join(copy, n)).st_size for n in os.listdir(copy)
                   if n.startswith('variables.data-'))
        reader = tf.train.load_checkpoint(prefix)
        shapes, dtypes = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
        claimed = sum(int(np.prod(shapes[k], dtype=np.int64)) * tf.as_dtype(dtypes[k]).size
                      for k in shapes)
        if claimed > held:
            return ('its variables claim %d bytes but the data files hold %d: they are '
                    'truncated or corrupt' % (claimed, held))
        for name in shapes:
            reader.get_tensor(name)
    except Exception as e:  # TF's own error types for damaged files
        return 'its variables are truncated or corrupt (%s)' % type(e).__name__
    return None


def noise_state(noise):
    """JSON-able process state of an exploration noise (its array, number and None
    attributes; ``{}`` for none): what lets a resumed run continue OU's ``x``."""
    if noise is None:
        return {}
    out = {}
    for k, v in vars(noise).items():
        if isinstance(v, np.ndarray):
            out[k] = {'array': v.tolist(), 'dtype': v.dtype.str}
        elif v is None or isinstance(v, (bool, int, float, np.integer, np.floating)):
            out[k] = {'value': v.item() if isinstance(v, np.generic) else v}
    return out


def load_noise_state(noise, state):
    """Put :func:`noise_state`'s ``state`` back into ``noise``."""
    if noise is None or not state:
        return
    for k, v in state.items():
        setattr(noise, k, np.asarray(v['array'], dtype=np.dtype(v['dtype']))
                if 'array' in v else v['value'])


class Checkpointer:
    """Saves and restores everything a training loop needs to continue.

    Args:
        logger: the run's ``EpochLogger`` (after ``setup_tf_saver``): its session, saver,
            output folder and stored diagnostics are used.
        envs: the envs whose RNG states are kept (training env first).
        buffer: an object with ``state_dict() -> dict of arrays`` and
            ``load_state_dict(d)`` (``ReplayBuffer``, ``GAEBuffer``), or None.
    """

    def __init__(self, logger, envs, buffer=None):
        self.logger = logger
        self.envs = list(envs)
        self.buffer = buffer
        self.path = osp.join(logger.output_dir, CHECKPOINT_DIR)

    def save(self, counters):
        """Write a checkpoint with the loop's ``counters`` (a JSON-able dict)."""
        from spinup_tf.utils.safe_files import remove_any
        path, tmp, old = _copies(self.logger.output_dir)
        _op('recover')
        recover(self.logger.output_dir)  # at most one complete copy, at ``path``
        _op('makedirs')
        os.makedirs(tmp)
        if self.logger.tf_saver is not None:
            _op('variables')
            self.logger.tf_saver.save(self.logger.session, osp.join(tmp, 'variables'),
                                      write_meta_graph=False, write_state=False)
        arrays = {}
        if self.buffer is not None:
            arrays.update({'buffer/' + k: v for k, v in self.buffer.state_dict().items()})
        for key, values in self.logger.epoch_dict.items():
            if values:
                arrays['epoch_dict/' + key] = np.concatenate([np.ravel(v) for v in values])
        _op('arrays')
        np.savez_compressed(osp.join(tmp, 'arrays.npz'), **arrays)
        state = dict(counters=counters, numpy_rng=_np_rng_state_to_json(),
                     env_rngs=_env_rng_states(self.envs),
                     records=make_records(self.logger.output_dir))
        if self.logger.model_extras:  # e.g. --normalize_obs's running statistics
            state['model_extras'] = {k: v.state_dict()
                                     for k, v in self.logger.model_extras.items()}
        _op('state')
        with open(osp.join(tmp, STATE_FILE + '.part'), 'w') as f:
            json.dump(state, f)
        _op('fsync')
        _fsync_tree(tmp)
        _op('complete')
        os.replace(osp.join(tmp, STATE_FILE + '.part'), osp.join(tmp, STATE_FILE))
        _fsync_dir(tmp)
        if osp.exists(path):
            _op('set aside')
            os.replace(path, old)
        _op('into place')
        os.replace(tmp, path)
        _fsync_dir(self.logger.output_dir)
        if osp.lexists(old):
            _op('delete old')
            remove_any(old)

    def restore(self):
        """Load the checkpoint into the session, RNGs, buffer and logger; return counters.

        The progress file is cut back to the epochs the checkpoint covers.
        """
        if not has_checkpoint(self.logger.output_dir):
            raise CheckpointError('no checkpoint in %s (runs save one every save_freq epochs)'
                                  % self.logger.output_dir)
        verify(self.logger.output_dir)  # reads only: nothing is changed unless it agrees
        recover(self.logger.output_dir)
        try:
            state = read_json(osp.join(self.path, STATE_FILE))
            counters = state['counters']
            if self.logger.tf_saver is not None:
                self.logger.tf_saver.restore(self.logger.session,
                                             osp.join(self.path, 'variables'))
            with np.load(osp.join(self.path, 'arrays.npz'), allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
            raise CheckpointError('the checkpoint in %s is unreadable, truncated or corrupt '
                                  '(%s: %s)' % (self.path, type(e).__name__,
                                                str(e).splitlines()[0] if str(e) else '')
                                  ) from None
        except Exception as e:  # TF raises its own error types for broken variable files
            from spinup_tf.utils.tf1 import tf
            broken = (tf.errors.DataLossError, tf.errors.OutOfRangeError)
            if isinstance(e, broken) or 'truncated' in str(e) or 'corrupt' in str(e).lower():
                raise CheckpointError('the checkpoint\'s variables in %s are truncated or '
                                      'corrupt (%s); it cannot be resumed'
                                      % (self.path, type(e).__name__)) from None
            raise CheckpointError('the checkpoint in %s does not fit this run (%s: its '
                                  'variables differ from the graph this config builds)'
                                  % (self.path, type(e).__name__)) from None
        try:
            _np_rng_state_from_json(state['numpy_rng'])
            _set_env_rng_states(self.envs, state['env_rngs'])
            for key, extra in self.logger.model_extras.items():
                if key in state.get('model_extras', {}):
                    extra.load_state_dict(state['model_extras'][key])
            if self.buffer is not None:
                self.buffer.load_state_dict({k[len('buffer/'):]: v for k, v in arrays.items()
                                             if k.startswith('buffer/')})
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
            raise CheckpointError('the checkpoint in %s does not fit this run (%s: %s); it '
                                  'cannot be resumed' % (self.path, type(e).__name__,
                                                         str(e).splitlines()[0][:200]
                                                         if str(e) else '')) from None
        # One item per value, in the saved dtype: what was stored one scalar at a time
        # (EpRet: one per episode) is counted and read as such again (the live line's
        # episodes, rllab's cumulative Es returns), and an array store's statistics are the
        # same numbers as without the interruption.
        self.logger.epoch_dict = {k[len('epoch_dict/'):]: list(v) for k, v in arrays.items()
                                  if k.startswith('epoch_dict/')}
        self.logger.truncate_progress(counters['epoch'])
        return counters
