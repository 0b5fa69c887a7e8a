"""``TorchAdamOptimizer`` (seed 001 v2's ``torch.optim.Adam``) against a hand-written torch
Adam step in numpy, and where it differs from ``tf.train.AdamOptimizer``."""
import numpy as np
import pytest

from spinup_tf.utils.tf1 import tf, make_session
from spinup_tf.reproductions.torch_adam import TorchAdamOptimizer


def torch_adam(params, grads_fn, steps, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    """``torch.optim.Adam.step`` (PyTorch >= 1.3, no weight decay, no AMSGrad), written out
    in numpy float32 from its documented update."""
    beta1, beta2 = betas
    p = params.astype(np.float32).copy()
    m, v = np.zeros_like(p), np.zeros_like(p)
    for step in range(1, steps + 1):
        g = grads_fn(p)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        denom = np.sqrt(v) / np.sqrt(bias_correction2) + eps
        p = p - (lr / bias_correction1) * m / denom
    return p


def tf_adam(params, grads_fn, steps, lr=1e-3, eps=1e-8):
    """``tf.train.AdamOptimizer``'s documented update ("epsilon hat"), in numpy."""
    p = params.astype(np.float32).copy()
    m, v = np.zeros_like(p), np.zeros_like(p)
    for step in range(1, steps + 1):
        g = grads_fn(p)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        lr_t = lr * np.sqrt(1 - 0.999 ** step) / (1 - 0.9 ** step)
        p = p - lr_t * m / (np.sqrt(v) + eps)
    return p


def run_tf(optimizer, params, loss_fn, steps, resource):
    graph = tf.Graph()
    with graph.as_default():
        w = tf.get_variable('w', initializer=params.astype(np.float32), use_resource=resource)
        train = optimizer().minimize(loss_fn(w), var_list=[w])
        sess = make_session(graph)
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
        return sess.run(w)


SCALE = np.array([1.0, 1e-3, 1e-6, 1e-8, 3e-9, 0.0], np.float32)


def loss(w):  # gradient SCALE * (w - 1): from ordinary to as small as epsilon, and zero
    return 0.5 * tf.reduce_sum(SCALE * tf.square(w - 1.0))


def grads(p):
    return SCALE * (p - 1.0)


@pytest.mark.parametrize('resource', [True, False])
def test_torch_adam_is_torchs_update(resource):
    w0 = np.array([3.0, -2.0, 5.0, 0.5, -4.0, 2.0], np.float32)
    for steps in (1, 2, 50):
        got = run_tf(lambda: TorchAdamOptimizer(1e-2), w0, loss, steps, resource)
        np.testing.assert_allclose(got, torch_adam(w0, grads, steps, lr=1e-2),
                                   rtol=2e-6, atol=1e-7)


def test_tf_adam_places_epsilon_before_the_bias_correction():
    """Where sqrt(v) is near epsilon (gradients of 1e-8), the two updates differ; where it
    is large they agree. TF's optimizer itself follows its documented update."""
    w0 = np.array([3.0, -2.0, 5.0, 0.5, -4.0, 2.0], np.float32)
    theirs = run_tf(lambda: tf.train.AdamOptimizer(1e-2), w0, loss, 3, True)
    np.testing.assert_allclose(theirs, tf_adam(w0, grads, 3, lr=1e-2), rtol=2e-6, atol=1e-7)
    ours = run_tf(lambda: TorchAdamOptimizer(1e-2), w0, loss, 3, True)
    moved_t, moved_o = w0 - theirs, w0 - ours
    np.testing.assert_allclose(moved_o[:2], moved_t[:2], rtol=1e-3)  # sqrt(v) >> eps
    # gradients of 4e-6 and 5e-9: sqrt(v) is 1e-7 and 2e-10 at the first step, so TF's
    # epsilon, 31.6x torch's there, slows those two
    assert np.all(np.abs(moved_o[2:4]) > 1.05 * np.abs(moved_t[2:4]))
    assert moved_o[5] == moved_t[5] == 0.0


def test_torch_adam_through_the_hooks_and_a_sparse_gradient():
    from spinup_tf.reproductions.hooks import make_hooks
    opt = make_hooks(torch_adam=True).optimizer(1e-3)
    assert isinstance(opt, TorchAdamOptimizer) and opt._epsilon == 1e-8
    assert make_hooks(torch_adam=True, adam_epsilon=1e-7).optimizer(1e-3)._epsilon == 1e-7
    # A gathered row gives an IndexedSlices gradient: applied as the dense gradient it is
    w0 = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    dense = run_tf(lambda: TorchAdamOptimizer(0.1), w0,
                   lambda w: tf.reduce_sum(tf.square(w * np.array([[0], [1], [0]], np.float32))),
                   3, True)
    sparse = run_tf(lambda: TorchAdamOptimizer(0.1), w0,
                    lambda w: tf.reduce_sum(tf.square(tf.gather(w, [1]))), 3, True)
    np.testing.assert_allclose(sparse, dense, rtol=1e-6)
    np.testing.assert_array_equal(sparse[[0, 2]], w0[[0, 2]])


def test_the_fast_engines_window_applies_torchs_adam_as_the_plain_engine(monkeypatch, tmp_path):
    """TD3 with --torch_adam: a fused window of updates leaves every variable (Adam's slots
    among them) where the plain engine's updates do, on the same batches."""
    from test_fused import capture, run_both, assert_same
    from spinup_tf.reproductions.hooks import make_hooks
    got = capture(monkeypatch, tmp_path, 'td3', policy_delay=2,
                  hooks=make_hooks(torch_adam=True))
    variables, start, plain, fused = run_both(got, 5)
    assert any('TorchAdam' in v.name for v in variables)  # its slots: torch's Adam ran
    assert_same(variables, plain, fused)
