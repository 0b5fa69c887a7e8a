"""A checkpoint survives a crash at any instant of its save: a failure is injected before
each file operation of ``Checkpointer.save`` in turn, and a later restore must find one
complete copy, the old or the new, never a mix and never "no checkpoint"."""
import os

import numpy as np
import pytest

from spinup_tf.utils import checkpoint
from spinup_tf.utils.checkpoint import Checkpointer, CheckpointError, has_checkpoint
from spinup_tf.utils.tf1 import tf

OPS = ['recover', 'makedirs', 'variables', 'arrays', 'state', 'fsync', 'complete',
       'set aside', 'into place', 'delete old']


class Crash(Exception):
    pass


class FakeLogger:
    """What Checkpointer uses of an EpochLogger, over a real one-variable graph."""

    def __init__(self, out):
        self.output_dir = str(out)
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.var = tf.get_variable('w', initializer=np.zeros(3, np.float32))
            self.value = tf.placeholder(tf.float32, (3,))
            self.assign = tf.assign(self.var, self.value)
            self.tf_saver = tf.train.Saver([self.var])
            self.session = tf.Session(graph=self.graph)
            self.session.run(tf.global_variables_initializer())
        self.epoch_dict, self.model_extras = {}, {}
        self.truncated_to = None

    def set(self, x):
        self.session.run(self.assign, {self.value: np.full(3, x, np.float32)})

    def get(self):
        return float(self.session.run(self.var)[0])

    def truncate_progress(self, epoch):
        self.truncated_to = epoch


class Buffer:
    def __init__(self, x):
        self.x = x

    def state_dict(self):
        return {'x': np.full(5, self.x)}

    def load_state_dict(self, d):
        self.x = float(d['x'][0])


def _save(logger, epoch, value):
    logger.set(value)
    logger.epoch_dict = {'EpRet': [np.array([value])]}
    Checkpointer(logger, [], Buffer(value)).save({'epoch': epoch, 't': 0})


def test_the_injection_points_are_every_file_operation(tmp_path):
    seen = []
    checkpoint._fault['hook'] = seen.append
    try:
        logger = FakeLogger(tmp_path)
        _save(logger, 1, 1.0)
        _save(logger, 2, 2.0)
    finally:
        checkpoint._fault['hook'] = None
    first = [op for op in OPS if op not in ('set aside', 'delete old')]  # nothing to replace
    assert seen == first + OPS


@pytest.mark.parametrize('op', OPS)
def test_a_crash_before_any_file_operation_leaves_one_complete_checkpoint(tmp_path, op):
    logger = FakeLogger(tmp_path)
    _save(logger, 1, 1.0)                      # the last good checkpoint: epoch 1, w = 1

    def crash(name):
        if name == op:
            raise Crash(name)
    checkpoint._fault['hook'] = crash
    try:
        with pytest.raises(Crash):
            _save(logger, 2, 2.0)              # dies before ``op``
    finally:
        checkpoint._fault['hook'] = None

    assert has_checkpoint(str(tmp_path))
    fresh = FakeLogger(tmp_path)               # a new process: resume
    buffer = Buffer(None)
    counters = Checkpointer(fresh, [], buffer).restore()
    epoch = counters['epoch']
    expected = {1: 1.0, 2: 2.0}[epoch]         # all parts from one save, never a mix
    assert fresh.get() == expected and buffer.x == expected
    assert float(fresh.epoch_dict['EpRet'][0]) == expected
    assert fresh.truncated_to == epoch
    # checkpoint/ wins while it is complete; once it is set aside, the complete new copy.
    assert epoch == (2 if op in ('into place', 'delete old') else 1)
    assert sorted(os.listdir(tmp_path)) == ['checkpoint']   # leftovers cleared
    # And saving again after the crash works.
    _save(fresh, 3, 3.0)
    assert Checkpointer(FakeLogger(tmp_path), [], Buffer(None)).restore()['epoch'] == 3


def test_truncated_state_or_variables_is_one_clear_error(tmp_path):
    logger = FakeLogger(tmp_path)
    _save(logger, 1, 1.0)
    data = [f for f in os.listdir(tmp_path / 'checkpoint') if f.startswith('variables.data')][0]
    with open(tmp_path / 'checkpoint' / data, 'r+b') as f:
        f.truncate(3)
    with pytest.raises(CheckpointError, match='truncated or corrupt'):
        Checkpointer(FakeLogger(tmp_path), [], Buffer(None)).restore()
    for name in ('state.json', 'arrays.npz'):
        _save(logger, 1, 1.0)
        with open(tmp_path / 'checkpoint' / name, 'r+b') as f:
            f.truncate(10)
        with pytest.raises(CheckpointError, match='truncated or corrupt'):
            Checkpointer(FakeLogger(tmp_path), [], Buffer(None)).restore()
