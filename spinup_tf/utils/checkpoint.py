"""Checkpoints that let a killed run continue: ``python run.py resume DIR``.

A checkpoint lives in ``DIR/checkpoint/`` and holds

* ``variables.*`` — every global variable of the graph through ``tf.train.Saver``: networks,
  target networks and the optimizers' slots and step counters;
* ``state.json`` — the loop's counters (next step, finished epochs, elapsed time), numpy's
  global RNG state, the RNG states of each env and its action space, and the logger's
  ``model_extras`` (the running statistics of ``--normalize_obs`` / ``--normalize_rew``);
* ``arrays.npz`` (compressed) — the experience buffer (for off-policy runs the filled part
  of the replay buffer) and the diagnostics already stored in the current epoch.

It is written to ``checkpoint.tmp/`` and renamed into place, so a crash while saving leaves
the previous checkpoint intact. Nothing is pickled.

A resumed run starts a fresh episode (an env's internal physics state is not portable), and
TensorFlow's in-graph random ops restart their streams, so it is not bit-identical to an
uninterrupted run; it has the same epochs, each exactly once, in one progress.txt.
"""
import json
import os
import os.path as osp
import shutil

import numpy as np

CHECKPOINT_DIR = 'checkpoint'


class CheckpointError(ValueError):
    """A checkpoint is missing, incomplete or does not fit the run."""


def has_checkpoint(output_dir):
    return osp.exists(osp.join(output_dir, CHECKPOINT_DIR, 'state.json'))


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
        tmp, old = self.path + '.tmp', self.path + '.old'
        for p in (tmp, old):
            if osp.exists(p):
                shutil.rmtree(p)
        os.makedirs(tmp)
        if self.logger.tf_saver is not None:
            self.logger.tf_saver.save(self.logger.session, osp.join(tmp, 'variables'),
                                      write_meta_graph=False, write_state=False)
        arrays = {}
        if self.buffer is not None:
            arrays.update({'buffer/' + k: v for k, v in self.buffer.state_dict().items()})
        for key, values in self.logger.epoch_dict.items():
            if values:
                arrays['epoch_dict/' + key] = np.concatenate([np.ravel(v) for v in values])
        np.savez_compressed(osp.join(tmp, 'arrays.npz'), **arrays)
        state = dict(counters=counters, numpy_rng=_np_rng_state_to_json(),
                     env_rngs=_env_rng_states(self.envs))
        if self.logger.model_extras:  # e.g. --normalize_obs's running statistics
            state['model_extras'] = {k: v.state_dict()
                                     for k, v in self.logger.model_extras.items()}
        with open(osp.join(tmp, 'state.json'), 'w') as f:
            json.dump(state, f)
        if osp.exists(self.path):
            os.replace(self.path, old)
        os.replace(tmp, self.path)
        if osp.exists(old):
            shutil.rmtree(old)

    def restore(self):
        """Load the checkpoint into the session, RNGs, buffer and logger; return counters.

        The progress file is cut back to the epochs the checkpoint covers.
        """
        if not has_checkpoint(self.logger.output_dir):
            raise CheckpointError('no checkpoint in %s (runs save one every save_freq epochs)'
                                  % self.logger.output_dir)
        try:
            with open(osp.join(self.path, 'state.json')) as f:
                state = json.load(f)
            counters = state['counters']
            if self.logger.tf_saver is not None:
                self.logger.tf_saver.restore(self.logger.session,
                                             osp.join(self.path, 'variables'))
            with np.load(osp.join(self.path, 'arrays.npz'), allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError, KeyError) as e:
            raise CheckpointError('the checkpoint in %s is unreadable (%s: %s)'
                                  % (self.path, type(e).__name__, str(e).splitlines()[0]
                                     if str(e) else '')) from None
        except Exception as e:  # TF raises its own error types for broken variable files
            raise CheckpointError('the checkpoint in %s does not fit this run (%s)'
                                  % (self.path, type(e).__name__)) from None
        _np_rng_state_from_json(state['numpy_rng'])
        _set_env_rng_states(self.envs, state['env_rngs'])
        for key, extra in self.logger.model_extras.items():
            if key in state.get('model_extras', {}):
                extra.load_state_dict(state['model_extras'][key])
        if self.buffer is not None:
            self.buffer.load_state_dict({k[len('buffer/'):]: v for k, v in arrays.items()
                                         if k.startswith('buffer/')})
        self.logger.epoch_dict = {k[len('epoch_dict/'):]: [v] for k, v in arrays.items()
                                  if k.startswith('epoch_dict/')}
        self.logger.truncate_progress(counters['epoch'])
        return counters
