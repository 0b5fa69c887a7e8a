import numpy as np
import pytest

from spinup_tf.loops.gae_buffer import GAEBuffer, discount_cumsum


def _loop_discount_cumsum(x, discount):
    out, running = np.zeros(len(x)), 0.0
    for t in reversed(range(len(x))):
        running = x[t] + discount * running
        out[t] = running
    return out


def _loop_gae(rews, vals, last_val, gamma, lam):
    """Hand-written GAE-lambda and rewards-to-go of one path."""
    T = len(rews)
    adv, ret = np.zeros(T), np.zeros(T)
    gae, running = 0.0, last_val
    for t in reversed(range(T)):
        next_val = last_val if t == T - 1 else vals[t + 1]
        delta = rews[t] + gamma * next_val - vals[t]
        gae = delta + gamma * lam * gae
        adv[t] = gae
        running = rews[t] + gamma * running
        ret[t] = running
    return adv, ret


def test_discount_cumsum_matches_loop():
    x = np.random.RandomState(0).normal(size=13)
    np.testing.assert_allclose(discount_cumsum(x, 0.9), _loop_discount_cumsum(x, 0.9))
    np.testing.assert_allclose(discount_cumsum(np.array([1., 2., 3.]), 0.5),
                               [1 + 0.5 * 2 + 0.25 * 3, 2 + 0.5 * 3, 3])


def _fill(buf, rng, lengths, last_vals, obs_dim=3, act_shape=(2,)):
    paths = []
    for T, last_val in zip(lengths, last_vals):
        rews = rng.normal(size=T)
        vals = rng.normal(size=T)
        for t in range(T):
            buf.store(rng.normal(size=obs_dim), rng.normal(size=act_shape), rews[t], vals[t],
                      -1.0, {'mu': np.full(act_shape, t, dtype=np.float32),
                             'log_std': np.zeros(act_shape)})
        buf.finish_path(last_val)
        paths.append((rews, vals, last_val))
    return paths


def test_gae_and_returns_match_loop():
    rng = np.random.RandomState(1)
    gamma, lam = 0.97, 0.9
    buf = GAEBuffer(3, 2, 12, {'mu': (2,), 'log_std': (2,)}, gamma=gamma, lam=lam)
    paths = _fill(buf, rng, lengths=[5, 4, 3], last_vals=[0.0, 1.7, -0.4])
    obs, act, adv, ret, logp, log_std, mu = buf.get(normalize_adv=False)
    ref_adv = np.concatenate([_loop_gae(r, v, lv, gamma, lam)[0] for r, v, lv in paths])
    ref_ret = np.concatenate([_loop_gae(r, v, lv, gamma, lam)[1] for r, v, lv in paths])
    np.testing.assert_allclose(adv, ref_adv, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ret, ref_ret, rtol=1e-5, atol=1e-5)
    assert obs.shape == (12, 3) and act.shape == (12, 2) and obs.dtype == np.float32
    assert logp.shape == (12,) and np.all(logp == -1.0)
    # info arrays come in sorted(info_shapes) order: log_std, mu
    assert log_std.shape == (12, 2) and np.all(log_std == 0)
    np.testing.assert_array_equal(mu[:5, 0], np.arange(5))


def test_gae_lambda_one_is_return_minus_value():
    rng = np.random.RandomState(2)
    buf = GAEBuffer(3, 2, 6, {'mu': (2,), 'log_std': (2,)}, gamma=0.9, lam=1.0)
    _fill(buf, rng, lengths=[6], last_vals=[0.5])
    val = buf.val_buf.copy()
    _, _, adv, ret, _, _, _ = buf.get(normalize_adv=False)
    np.testing.assert_allclose(adv, ret - val, rtol=1e-5, atol=1e-5)


def test_advantage_normalisation():
    rng = np.random.RandomState(3)
    buf = GAEBuffer(3, 2, 10, {'mu': (2,), 'log_std': (2,)})
    _fill(buf, rng, lengths=[6, 4], last_vals=[0.0, 0.3])
    raw = buf.adv_buf.copy()
    adv = buf.get()[2]
    assert adv.dtype == np.float32
    assert abs(adv.mean()) < 1e-6 and abs(adv.std() - 1) < 1e-5
    np.testing.assert_allclose(adv, (raw - raw.mean()) / raw.std(), rtol=1e-4, atol=1e-5)


def test_truncation_bootstraps_and_termination_does_not():
    gamma, T = 0.9, 8
    true_v = 1 / (1 - gamma)
    for last_val, expected in [(true_v, np.full(T, true_v)),
                               (0.0, (1 - gamma ** np.arange(T, 0, -1)) / (1 - gamma))]:
        buf = GAEBuffer(1, None, T, {}, gamma=gamma, lam=0.95)
        for t in range(T):
            buf.store([0.0], 0, 1.0, true_v, 0.0, [])
        buf.finish_path(last_val)
        obs, act, adv, ret, logp = buf.get(normalize_adv=False)
        np.testing.assert_allclose(ret, expected, rtol=1e-5)
        if last_val == true_v:  # exact values: every TD error is zero
            np.testing.assert_allclose(adv, 0, atol=1e-4)
    assert act.shape == (T,)


def test_discrete_actions_and_sequence_info():
    buf = GAEBuffer(2, None, 3, {'logp_all': (4,)})
    for t in range(3):
        buf.store([t, t], t, 0.0, 0.0, 0.0, [np.full(4, t)])  # info as sorted-key sequence
    buf.finish_path()
    obs, act, adv, ret, logp, logp_all = buf.get()
    np.testing.assert_array_equal(act, [0, 1, 2])
    np.testing.assert_array_equal(logp_all[:, 0], [0, 1, 2])


def test_get_requires_full_buffer_and_resets():
    buf = GAEBuffer(1, 1, 4, {})
    for t in range(3):
        buf.store([0.0], [0.0], 1.0, 0.0, 0.0)
    buf.finish_path()
    with pytest.raises(RuntimeError, match='full buffer'):
        buf.get()
    buf.store([0.0], [0.0], 1.0, 0.0, 0.0)
    with pytest.raises(RuntimeError, match='not finished'):
        buf.get()
    buf.finish_path(0.0)
    with pytest.raises(RuntimeError, match='full'):
        buf.store([0.0], [0.0], 1.0, 0.0, 0.0)
    assert len(buf.get()) == 5
    buf.store([0.0], [0.0], 1.0, 0.0, 0.0)  # reset: storing works again
    assert buf.ptr == 1
