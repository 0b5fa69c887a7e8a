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


def test_gae_and_returns_hand_computed():
    """Two short paths with numbers worked out by hand (gamma = lam = 0.5, so gamma*lam =
    0.25; every value is a dyadic fraction, exact in float32).

    Path 1, cut with V(s_3) = 2: rewards 1, 2, 3; values 0.5, 1, 1.5.
      deltas  d2 = 3 + 0.5*2 - 1.5 = 2.5,  d1 = 2 + 0.5*1.5 - 1 = 1.75,  d0 = 1 + 0.5*1 - 0.5 = 1
      GAE     A2 = 2.5,  A1 = 1.75 + 0.25*2.5 = 2.375,  A0 = 1 + 0.25*2.375 = 1.59375
      returns R2 = 3 + 0.5*2 = 4,  R1 = 2 + 0.5*4 = 4,  R0 = 1 + 0.5*4 = 3
    Path 2, terminated (last_val 0): rewards 1, -1; values 2, 0.
      deltas  d1 = -1 + 0 - 0 = -1,  d0 = 1 + 0.5*0 - 2 = -1
      GAE     A1 = -1,  A0 = -1 + 0.25*(-1) = -1.25
      returns R1 = -1,  R0 = 1 + 0.5*(-1) = 0.5
    """
    buf = GAEBuffer(1, None, 5, {}, gamma=0.5, lam=0.5)
    for r, v in [(1, 0.5), (2, 1.0), (3, 1.5)]:
        buf.store([0.0], 0, r, v, 0.0)
    buf.finish_path(2.0)
    for r, v in [(1, 2.0), (-1, 0.0)]:
        buf.store([0.0], 0, r, v, 0.0)
    buf.finish_path(0.0)
    _, _, adv, ret, _ = buf.get(normalize_adv=False)
    np.testing.assert_array_equal(adv, [1.59375, 2.375, 2.5, -1.25, -1.0])
    np.testing.assert_array_equal(ret, [3.0, 4.0, 4.0, 0.5, -1.0])


def _fill(buf, rng, lengths, last_vals, obs_dim=3, act_shape=(2,)):
    """Store random paths; returns, per path, the rewards, values and last value it stored."""
    paths = []
    for T, last_val in zip(lengths, last_vals):
        rews = rng.normal(size=T).astype(np.float32)
        vals = rng.normal(size=T).astype(np.float32)
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
    adv, ret = buf.get(normalize_adv=False)[2:4]
    ref_adv = np.concatenate([_loop_gae(r, v, lv, gamma, lam)[0] for r, v, lv in paths])
    ref_ret = np.concatenate([_loop_gae(r, v, lv, gamma, lam)[1] for r, v, lv in paths])
    np.testing.assert_allclose(adv, ref_adv, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ret, ref_ret, rtol=1e-5, atol=1e-5)


def test_get_returns_each_field_row_aligned_in_sorted_info_order():
    """Every stored field comes back in its own slot, row t holding step t: each step stores
    values unique to its field and step, so a swapped field, a shifted row or a wrong info
    order shows (sorted(info_shapes): log_std before mu)."""
    buf = GAEBuffer(3, 2, 6, {'mu': (2,), 'log_std': (2,)})
    for t in range(6):
        buf.store(100 + t + np.arange(3) / 10, 200 + t + np.arange(2) / 10, 0.0, 0.0, -300 - t,
                  {'mu': 400 + t + np.arange(2) / 10, 'log_std': -(500 + t + np.arange(2) / 10)})
        if t in (2, 5):
            buf.finish_path(0.0)
    obs, act, adv, ret, logp, log_std, mu = buf.get(normalize_adv=False)
    steps = np.arange(6)[:, None]
    assert obs.shape == (6, 3) and obs.dtype == np.float32 and act.shape == (6, 2)
    np.testing.assert_allclose(obs, 100 + steps + np.arange(3) / 10, rtol=1e-6)
    np.testing.assert_allclose(act, 200 + steps + np.arange(2) / 10, rtol=1e-6)
    np.testing.assert_allclose(logp, -300 - np.arange(6), rtol=1e-6)
    np.testing.assert_allclose(mu, 400 + steps + np.arange(2) / 10, rtol=1e-6)
    np.testing.assert_allclose(log_std, -(500 + steps + np.arange(2) / 10), rtol=1e-6)


def test_gae_lambda_one_is_return_minus_value():
    """With lam = 1 the advantage telescopes to (bootstrapped discounted return) - V(s_t);
    both computed here with plain loops from the values the test generated."""
    rng = np.random.RandomState(2)
    gamma, last_val = 0.9, 0.5
    buf = GAEBuffer(3, 2, 6, {'mu': (2,), 'log_std': (2,)}, gamma=gamma, lam=1.0)
    [(rews, vals, _)] = _fill(buf, rng, lengths=[6], last_vals=[last_val])
    ref_ret = _loop_discount_cumsum(np.append(rews, last_val), gamma)[:-1]
    adv = buf.get(normalize_adv=False)[2]
    np.testing.assert_allclose(adv, ref_ret - vals, rtol=1e-5, atol=1e-5)


def test_advantage_normalisation():
    """get() normalises the loop-computed GAE advantages to mean 0, (population) std 1."""
    rng = np.random.RandomState(3)
    gamma, lam = 0.99, 0.95  # GAEBuffer's defaults
    buf = GAEBuffer(3, 2, 10, {'mu': (2,), 'log_std': (2,)})
    paths = _fill(buf, rng, lengths=[6, 4], last_vals=[0.0, 0.3])
    raw = [a for r, v, lv in paths for a in _loop_gae(r, v, lv, gamma, lam)[0]]
    mean = sum(raw) / len(raw)
    std = (sum((a - mean) ** 2 for a in raw) / len(raw)) ** 0.5
    adv = buf.get()[2]
    assert adv.dtype == np.float32
    np.testing.assert_allclose(adv, [(a - mean) / std for a in raw], rtol=1e-4, atol=1e-5)
    assert abs(adv.mean()) < 1e-6 and abs(adv.std() - 1) < 1e-5


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


def _seed_004_statistics_scalar(x):
    """Seed 004 lines 238-243."""
    x = np.array(x, dtype=np.float32)
    x_sum, x_n = [np.sum(x), len(x)]
    mean = x_sum / x_n
    x_sum_sq = np.sum((x - mean) ** 2)
    std = np.sqrt(x_sum_sq / x_n)
    return mean, std


def test_advantages_without_epsilon_are_seed_004s():
    """Seed 004 lines 357-358 (Spinning Up's TF1 buffers): ``(adv - mean) / std``;
    ``adv_epsilon=0`` gives exactly that, the default adds EPS to the std, which shows only
    where the std is tiny."""
    rng = np.random.RandomState(5)
    buf = GAEBuffer(3, 2, 10, {}, adv_epsilon=0.0)
    _fill(buf, rng, lengths=[6, 4], last_vals=[0.0, 0.3])
    raw = buf.adv_buf.copy()
    mean, std = _seed_004_statistics_scalar(raw)
    np.testing.assert_array_equal(buf.get()[2], (raw - mean) / std)
    for eps, expected in ((0.0, [-1.0, 1.0]), (1e-8, [-0.5, 0.5])):
        tiny = GAEBuffer(1, 1, 2, {}, adv_epsilon=eps)
        for a in (0.0, 2e-8):  # advantages 0 and 2e-8: std 1e-8
            tiny.store([0.0], [0.0], 0.0, 0.0, 0.0)
        tiny.finish_path(0.0)
        tiny.adv_buf[:] = [0.0, 2e-8]
        np.testing.assert_allclose(tiny.get()[2], expected, rtol=1e-5)
