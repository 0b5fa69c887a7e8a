"""ReplayBuffer: FIFO storage, uniform sampling over the filled part."""
import numpy as np
import pytest

from spinup_tf.replay_buffer import ReplayBuffer


def test_store_sample_and_fifo_overwrite():
    np.random.seed(0)
    buf = ReplayBuffer(obs_dim=2, act_dim=1, size=5)
    for i in range(7):
        buf.store([i, i], [i], float(i), [i + 1, i + 1], float(i % 2))
    assert buf.size == 5 and buf.ptr == 2
    # Oldest two (0, 1) were overwritten by 5, 6.
    assert sorted(buf.rews_buf.tolist()) == [2, 3, 4, 5, 6]
    batch = buf.sample_batch(200)
    assert batch['obs1'].shape == (200, 2) and batch['acts'].shape == (200, 1)
    assert batch['obs1'].dtype == np.float32
    np.testing.assert_array_equal(batch['obs2'][:, 0], batch['obs1'][:, 0] + 1)
    np.testing.assert_array_equal(batch['done'], batch['rews'] % 2)
    assert set(batch['rews'].tolist()) == {2, 3, 4, 5, 6}


def test_samples_only_the_filled_part():
    np.random.seed(1)
    buf = ReplayBuffer(obs_dim=1, act_dim=1, size=100)
    for i in range(3):
        buf.store([i], [0], 1.0, [i], 0.0)
    idx = buf.sample_indices(1000)
    assert idx.min() == 0 and idx.max() == 2


def test_empty_buffer_and_bad_size():
    with pytest.raises(ValueError):
        ReplayBuffer(1, 1, 10).sample_batch(4)
    with pytest.raises(ValueError):
        ReplayBuffer(1, 1, 0)
