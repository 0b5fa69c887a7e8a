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

**Exact resume.** A resumed run repeats the uninterrupted one: the in-graph random draws
come from counters in the checkpointed variables (``spinup_tf.utils.tf1.draw_seed``), and the
loops rebuild the open episode by replaying its reset and actions
(``spinup_tf.loops.episode_replay``), so progress.txt is the same apart from ``Time``.
"""
import json
import os
import os.path as osp
import shutil
import zipfile

import numpy as np

from spinup_tf.utils.errors import UserInputError

CHECKPOINT_DIR = 'checkpoint'


class CheckpointError(UserInputError):
    """A checkpoint is missing, incomplete or does not fit the run (one ``error:`` line)."""


STATE_FILE = 'state.json'   # written last: a folder with it is a complete checkpoint
_fault = {'hook': None}     # tests: called with each file operation's name before it runs


def _op(name):
    if _fault['hook'] is not None:
        _fault['hook'](name)


def _complete(path):
    return osp.isfile(osp.join(path, STATE_FILE))


def _copies(output_dir):
    base = osp.join(output_dir, CHECKPOINT_DIR)
    return base, base + '.tmp', base + '.old'


def has_checkpoint(output_dir):
    """True when a complete copy exists (in place, or left by a save that crashed)."""
    return any(_complete(p) for p in _copies(output_dir))


def recover(output_dir):
    """Put the newest complete copy at ``checkpoint/`` and delete the others (after a save
    that crashed half way). Call it only while holding the run folder."""
    path, tmp, old = _copies(output_dir)
    if not _complete(path):
        for candidate in (tmp, old):
            if _complete(candidate):
                if osp.exists(path):
                    shutil.rmtree(path)
                os.replace(candidate, path)
                break
    for leftover in (tmp, old):
        if osp.exists(leftover):
            shutil.rmtree(leftover)


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
                     env_rngs=_env_rng_states(self.envs))
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
        if osp.exists(old):
            _op('delete old')
            shutil.rmtree(old)

    def restore(self):
        """Load the checkpoint into the session, RNGs, buffer and logger; return counters.

        The progress file is cut back to the epochs the checkpoint covers.
        """
        if not has_checkpoint(self.logger.output_dir):
            raise CheckpointError('no checkpoint in %s (runs save one every save_freq epochs)'
                                  % self.logger.output_dir)
        recover(self.logger.output_dir)
        try:
            with open(osp.join(self.path, STATE_FILE)) as f:
                state = json.load(f)
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
        _np_rng_state_from_json(state['numpy_rng'])
        _set_env_rng_states(self.envs, state['env_rngs'])
        for key, extra in self.logger.model_extras.items():
            if key in state.get('model_extras', {}):
                extra.load_state_dict(state['model_extras'][key])
        if self.buffer is not None:
            self.buffer.load_state_dict({k[len('buffer/'):]: v for k, v in arrays.items()
                                         if k.startswith('buffer/')})
        # One item per value, in the saved dtype: what was stored one scalar at a time
        # (EpRet: one per episode) is counted and read as such again (the live line's
        # episodes, rllab's cumulative Es returns), and an array store's statistics are the
        # same numbers as without the interruption.
        self.logger.epoch_dict = {k[len('epoch_dict/'):]: list(v) for k, v in arrays.items()
                                  if k.startswith('epoch_dict/')}
        self.logger.truncate_progress(counters['epoch'])
        return counters
