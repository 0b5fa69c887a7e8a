import numpy as np
import pytest
from gymnasium.spaces import Box, Discrete

from spinup_tf.utils.tf1 import tf, placeholder, placeholder_from_space, get_trainable_vars
from spinup_tf.algos.distributions import mlp_actor_critic
from spinup_tf.algos.natural_gradient import (flat_concat, flat_grad, hessian_vector_product,
                                              assign_params_from_flat, conjugate_gradient,
                                              natural_gradient_step, backtracking_line_search)


def _assert_close_rel(x, ref, tol):
    """``||x - ref|| <= tol * ||ref||``. CG's ``EPS`` in the step size (as Spinning Up) limits
    the attainable accuracy to about 1e-6 relative on O(1) systems."""
    assert np.linalg.norm(x - ref) <= tol * np.linalg.norm(ref), np.linalg.norm(x - ref)


def _random_spd(rng, n, low=0.5, high=5.0):
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (q * rng.uniform(low, high, size=n)) @ q.T


# --------------------------------------------------------------------------------------------
# Graph pieces
# --------------------------------------------------------------------------------------------
def test_flat_concat_and_assign_round_trip():
    rng = np.random.RandomState(0)
    with tf.Graph().as_default():
        params = [tf.get_variable('a', shape=(2, 3)), tf.get_variable('b', shape=(4,)),
                  tf.get_variable('c', shape=(1, 2, 2))]
        flat = flat_concat(params)
        assert flat.shape.as_list() == [14]
        v_ph = tf.placeholder(tf.float32, shape=(14,))
        assign = assign_params_from_flat(v_ph, params)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            new = rng.normal(size=14).astype(np.float32)
            sess.run(assign, {v_ph: new})
            np.testing.assert_array_equal(sess.run(flat), new)
            a, b, c = sess.run(params)
            np.testing.assert_array_equal(a, new[:6].reshape(2, 3))
            np.testing.assert_array_equal(b, new[6:10])
            np.testing.assert_array_equal(c, new[10:].reshape(1, 2, 2))
            # and back: assigning the current flat vector changes nothing
            cur = sess.run(flat)
            sess.run(assign, {v_ph: cur})
            np.testing.assert_array_equal(sess.run(flat), cur)


def test_flat_grad_zero_for_unused_param():
    with tf.Graph().as_default():
        a = tf.get_variable('a', initializer=np.array([1., 2.], dtype=np.float32))
        b = tf.get_variable('b', initializer=np.array([3.], dtype=np.float32))
        g = flat_grad(tf.reduce_sum(a ** 2), [a, b])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(g), [2., 4., 0.])


def test_hvp_quadratic_exact():
    """f = 0.5 p^T A p over two variables: the Hessian is exactly A."""
    rng = np.random.RandomState(1)
    n = 10
    A = rng.normal(size=(n, n))
    A = (A + A.T).astype(np.float32)
    with tf.Graph().as_default():
        params = [tf.get_variable('w', shape=(2, 3)), tf.get_variable('b', shape=(4,))]
        p = flat_concat(params)
        f = 0.5 * tf.reduce_sum(p * tf.linalg.matvec(tf.constant(A), p))
        x_ph, Hx = hessian_vector_product(f, params)
        assert x_ph.shape.as_list() == [n] and Hx.shape.as_list() == [n]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                v = rng.normal(size=n).astype(np.float32)
                np.testing.assert_allclose(sess.run(Hx, {x_ph: v}), A @ v, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('space', [Box(-1, 1, shape=(2,), dtype=np.float32), Discrete(3)],
                         ids=['gaussian', 'categorical'])
def test_hvp_matches_finite_difference_hessian_of_kl(space):
    """HVP of the mean KL(old || current) on a tiny network equals H v with H built by central
    finite differences of flat_grad (old fixed at the starting params)."""
    rng = np.random.RandomState(2)
    obs = rng.normal(size=(16, 3)).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x_ph = placeholder(3)
        a_ph = placeholder_from_space(space)
        _, _, _, info, info_phs, d_kl, _ = mlp_actor_critic(
            x_ph, a_ph, hidden_sizes=(4,), action_space=space)
        params = get_trainable_vars('pi')
        n = int(sum(np.prod(p.shape.as_list()) for p in params))
        flat = flat_concat(params)
        g = flat_grad(d_kl, params)
        v_ph, Hx = hessian_vector_product(d_kl, params)
        set_ph = tf.placeholder(tf.float32, shape=(n,))
        set_params = assign_params_from_flat(set_ph, params)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            if isinstance(space, Box):
                # move log_std off its constant init so that all directions matter
                p0 = sess.run(flat)
                p0[-2:] = [-0.3, -0.7]
                sess.run(set_params, {set_ph: p0})
            theta0 = sess.run(flat)
            keys = sorted(info)
            old = sess.run([info[k] for k in keys], {x_ph: obs})
            feed = {x_ph: obs}
            for k, val in zip(keys, old):
                feed[info_phs[k]] = np.broadcast_to(val, (len(obs),) + val.shape[-1:])
            assert abs(sess.run(d_kl, feed)) < 1e-6  # KL of the policy with itself

            eps = 1e-3
            H = np.zeros((n, n))
            for i in range(n):
                e = np.zeros(n, dtype=np.float32)
                e[i] = eps
                sess.run(set_params, {set_ph: theta0 + e})
                g_plus = sess.run(g, feed)
                sess.run(set_params, {set_ph: theta0 - e})
                g_minus = sess.run(g, feed)
                H[:, i] = (g_plus - g_minus) / (2 * eps)
            sess.run(set_params, {set_ph: theta0})
            H = 0.5 * (H + H.T)
            assert np.abs(H).max() > 1e-2  # non-trivial Hessian
            for _ in range(3):
                v = rng.normal(size=n).astype(np.float32)
                hvp = sess.run(Hx, {**feed, v_ph: v})
                ref = H @ v
                np.testing.assert_allclose(hvp, ref, rtol=1e-2,
                                           atol=1e-3 * np.abs(ref).max())


# --------------------------------------------------------------------------------------------
# Conjugate gradient and the natural-gradient step
# --------------------------------------------------------------------------------------------
def test_conjugate_gradient_solves_spd_system():
    rng = np.random.RandomState(3)
    n = 20
    A = _random_spd(rng, n)
    b = rng.normal(size=n)
    x = conjugate_gradient(lambda v: A @ v, b, iters=50)
    _assert_close_rel(x, np.linalg.solve(A, b), 1e-4)
    _assert_close_rel(A @ x, b, 1e-4)


def test_conjugate_gradient_early_exit():
    calls = []

    def Ax(v):
        calls.append(1)
        return 2.0 * v

    x = conjugate_gradient(Ax, np.ones(5), iters=10)
    np.testing.assert_allclose(x, 0.5 * np.ones(5), rtol=1e-6)
    assert len(calls) == 1  # identity-like system: one step then the residual is ~0
    assert np.all(conjugate_gradient(Ax, np.zeros(5)) == 0)


def test_conjugate_gradient_with_damping():
    rng = np.random.RandomState(4)
    n = 20
    H = _random_spd(rng, n, low=0.0, high=3.0)  # near-singular Fisher-like
    g = rng.normal(size=n)
    damping = 0.1
    x = conjugate_gradient(lambda v: H @ v + damping * v, g, iters=100)
    _assert_close_rel(x, np.linalg.solve(H + damping * np.eye(n), g), 1e-4)
    # and it is not the undamped solution
    assert np.linalg.norm(x - np.linalg.solve(H, g)) > 1e-2 * np.linalg.norm(x)


def test_natural_gradient_step_kl_quadratic_equals_delta():
    rng = np.random.RandomState(5)
    n, delta, damping = 20, 0.01, 0.1
    H = _random_spd(rng, n, low=0.0, high=3.0)
    g = rng.normal(size=n)
    x, alpha, full_step = natural_gradient_step(g, lambda v: H @ v, delta, cg_iters=100,
                                                damping=damping)
    Hd = H + damping * np.eye(n)
    _assert_close_rel(x, np.linalg.solve(Hd, g), 1e-4)
    np.testing.assert_allclose(full_step, alpha * x)
    np.testing.assert_allclose(full_step @ Hd @ full_step, 2 * delta, rtol=1e-6)


def test_npg_full_step():
    rng = np.random.RandomState(6)
    n, delta = 20, 0.05
    H = _random_spd(rng, n)
    g = rng.normal(size=n)
    x, alpha, full_step = natural_gradient_step(g, lambda v: H @ v, delta, cg_iters=100,
                                                damping=0.0)
    x_true = np.linalg.solve(H, g)
    _assert_close_rel(x, x_true, 1e-4)
    np.testing.assert_allclose(full_step, np.sqrt(2 * delta / (x @ H @ x)) * x, rtol=1e-6)
    np.testing.assert_allclose(0.5 * full_step @ H @ full_step, delta, rtol=1e-6)


# --------------------------------------------------------------------------------------------
# Line search
# --------------------------------------------------------------------------------------------
class _Synthetic:
    """KL = c ||p - p_old||^2, loss = 0.5 ||p - target||^2; remembers the params it holds."""

    def __init__(self, p_old, target, c):
        self.p_old, self.target, self.c = p_old, target, c
        self.params = p_old.copy()
        self.calls = []

    def kl(self, p):
        return self.c * np.sum((p - self.p_old) ** 2)

    def loss(self, p):
        return 0.5 * np.sum((p - self.target) ** 2)

    def __call__(self, p):
        self.params = np.array(p, copy=True)
        self.calls.append(self.params)
        return self.kl(p), self.loss(p)


# A case worked out by hand. p_old = (3, -1), full_step = (-8, 8), backtrack_coeff = 0.5: try j
# sets p_old - 0.5^j full_step = p_old + s (1, -1) with s = 8 * 0.5^j = 8, 4, 2, 1, ...
# With KL = 0.25 ||p - p_old||^2 = s^2 / 2 and loss = 0.5 ||p - (4, -2)||^2 = (s - 1)^2
# (old loss 1):
#     j   params      s   KL    loss
#     0   (11, -9)    8   32    49
#     1   (7, -5)     4    8     9
#     2   (5, -3)     2    2     1   <- loss ties the old loss (accepted: <=)
#     3   (4, -2)     1   0.5    0
# Every number is exact in binary floating point.
_P_OLD, _FULL_STEP, _TARGET = np.array([3.0, -1.0]), np.array([-8.0, 8.0]), np.array([4.0, -2.0])
_TRIES = [[11.0, -9.0], [7.0, -5.0], [5.0, -3.0], [4.0, -2.0]]


def test_line_search_hand_built_kl_bound_decides():
    """max_kl = 1: j = 0, 1 fail both tests, j = 2 passes the loss test but not the KL
    (2 > 1), j = 3 is the first accepted: params (4, -2), KL 0.5, loss 0."""
    env = _Synthetic(_P_OLD, _TARGET, c=0.25)
    j, kl, loss = backtracking_line_search(env, _P_OLD, _FULL_STEP, max_kl=1.0,
                                           old_surrogate_loss=1.0, backtrack_iters=10,
                                           backtrack_coeff=0.5)
    assert (j, kl, loss) == (3, 0.5, 0.0)
    np.testing.assert_array_equal(env.calls, _TRIES)
    np.testing.assert_array_equal(env.params, [4.0, -2.0])


def test_line_search_hand_built_loss_test_decides_and_ties_pass():
    """max_kl = 100 (never binding here): j = 0, 1 raise the loss (49, 9 > 1); j = 2 ties the
    old loss and is accepted: params (5, -3), KL 2, loss 1."""
    env = _Synthetic(_P_OLD, _TARGET, c=0.25)
    j, kl, loss = backtracking_line_search(env, _P_OLD, _FULL_STEP, max_kl=100.0,
                                           old_surrogate_loss=1.0, backtrack_iters=10,
                                           backtrack_coeff=0.5)
    assert (j, kl, loss) == (2, 2.0, 1.0)
    np.testing.assert_array_equal(env.calls, _TRIES[:3])
    np.testing.assert_array_equal(env.params, [5.0, -3.0])


def test_line_search_hand_built_runs_out_of_tries():
    """max_kl = 1 with only 3 tries: j = 0, 1, 2 all fail, so the old params (3, -1) are set
    again and reported with their own KL 0 and loss 1, and j = backtrack_iters = 3."""
    env = _Synthetic(_P_OLD, _TARGET, c=0.25)
    j, kl, loss = backtracking_line_search(env, _P_OLD, _FULL_STEP, max_kl=1.0,
                                           old_surrogate_loss=1.0, backtrack_iters=3,
                                           backtrack_coeff=0.5)
    assert (j, kl, loss) == (3, 0.0, 1.0)
    np.testing.assert_array_equal(env.calls, _TRIES[:3] + [[3.0, -1.0]])
    np.testing.assert_array_equal(env.params, _P_OLD)


def test_line_search_failure_restores_old_params():
    p_old = np.array([1.0, -1.0, 0.5])
    target = np.array([0.0, 0.0, 0.0])
    full_step = -(p_old - target)  # every step moves away from the target: loss rises
    env = _Synthetic(p_old, target, c=1.0)
    old_loss = env.loss(p_old)
    j, kl, loss = backtracking_line_search(env, p_old, full_step, max_kl=10.0,
                                           old_surrogate_loss=old_loss,
                                           backtrack_iters=7, backtrack_coeff=0.5)
    assert j == 7
    assert len(env.calls) == 8
    np.testing.assert_array_equal(env.params, p_old)
    assert kl == 0.0 and loss == old_loss


# --------------------------------------------------------------------------------------------
# Spinning Up's own numerics (seed 004, --spinning_up_cg)
# --------------------------------------------------------------------------------------------
def _seed_004_cg(Ax, b, cg_iters=10):
    """Seed 004 lines 473-486 as written (its ``g`` and ``Hx`` pass through ``x_sum``, lines
    233-236, which casts them to float32)."""
    EPS = 1e-8
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    r_dot_old = np.dot(r, r)
    for _ in range(cg_iters):
        z = Ax(p)
        alpha = r_dot_old / (np.dot(p, z) + EPS)
        x += alpha * p
        r -= alpha * z
        r_dot_new = np.dot(r, r)
        p = r + (r_dot_new / r_dot_old) * p
        r_dot_old = r_dot_new
    return x


def _x_sum(x):
    return np.asarray(x, dtype=np.float32)


def test_spinning_up_cg_is_seed_004s_cg_in_float32_with_every_iteration():
    from spinup_tf.algos.natural_gradient import SPINNING_UP_CG
    rng = np.random.RandomState(7)
    n = 40
    A = _random_spd(rng, n, low=0.05, high=4.0)
    b = _x_sum(rng.normal(size=n))
    calls = []

    def Ax(v):
        calls.append(v.dtype)
        return _x_sum(A @ v)
    ref = _seed_004_cg(Ax, b)
    n_ref = len(calls)
    x = conjugate_gradient(Ax, b, iters=10, **SPINNING_UP_CG)
    assert x.dtype == np.float32 and set(calls) == {np.dtype(np.float32)}
    assert len(calls) == 2 * n_ref == 20  # every iteration, as the seed
    np.testing.assert_array_equal(x, ref)
    # This project's solver: float64, the same solution to float32 precision
    ours = conjugate_gradient(lambda v: A @ v, b, iters=10)
    assert ours.dtype == np.float64
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-5)


def test_spinning_up_cg_has_no_early_exit():
    """On a system that one iteration solves, this project's CG stops; Spinning Up's runs
    all cg_iters iterations (a residual of exactly 0 then gives 0/0, NaN, as there)."""
    from spinup_tf.algos.natural_gradient import SPINNING_UP_CG
    calls = []

    def Ax(v):
        calls.append(1)
        return 2.0 * v
    conjugate_gradient(Ax, np.ones(5), iters=10)
    assert len(calls) == 1
    del calls[:]
    b = np.array([1.0, 2.0, 3.0], np.float32)
    with np.errstate(invalid='ignore', divide='ignore'):
        ref = _seed_004_cg(lambda v: _x_sum(2.0 * v), b)
    x = conjugate_gradient(Ax, b, iters=10, **SPINNING_UP_CG)
    assert len(calls) == 10
    np.testing.assert_array_equal(np.isnan(x), np.isnan(ref))


def test_natural_gradient_step_in_spinning_up_numerics_is_seed_004s():
    """Seed 004 lines 463-464, 491-497: the damping added to Hx in float32, cg, then
    ``alpha = np.sqrt(2 * delta / (np.dot(x, Hx(x)) + EPS))``; solver_numerics switches the
    step to it and back."""
    from spinup_tf.algos import natural_gradient as ng
    rng = np.random.RandomState(8)
    n, delta, damping = 30, 0.01, 0.1
    H = _random_spd(rng, n, low=0.0, high=3.0).astype(np.float32)
    g = _x_sum(rng.normal(size=n))

    def hvp(v):  # the graph's float32 hvp without damping
        return _x_sum(H @ v)

    def seed_Hx(v):  # hvp += damping_coeff * v_ph, in the graph: float32
        return _x_sum(hvp(v) + np.float32(damping) * _x_sum(v))
    x_ref = _seed_004_cg(seed_Hx, g)
    alpha_ref = np.sqrt(2 * delta / (np.dot(x_ref, seed_Hx(x_ref)) + 1e-8))
    with ng.solver_numerics(**ng.SPINNING_UP_CG):
        x, alpha, full_step = ng.natural_gradient_step(g, hvp, delta, 10, damping)
    assert x.dtype == np.float32 and full_step.dtype == np.float32
    np.testing.assert_allclose(x, x_ref, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(alpha, alpha_ref, rtol=1e-6)
    x64, _, _ = ng.natural_gradient_step(g, hvp, delta, 10, damping)  # the block ended
    assert x64.dtype == np.float64 and ng._numerics == ng.OUR_CG
