"""Numeric building blocks of TRPO / NPG: flat parameter vectors, Hessian-vector products,
conjugate gradient, the natural-gradient step and the backtracking line search.

Graph pieces (``flat_concat``, ``flat_grad``, ``hessian_vector_product``,
``assign_params_from_flat``) build static ``tf.compat.v1`` ops; the solvers
(``conjugate_gradient``, ``natural_gradient_step``, ``backtracking_line_search``) are plain
numpy and take python callables, so they are tested without a graph.

The solver's numerics: this project solves in float64 and stops once the residual is tiny.
Spinning Up's TF1 ``trpo.py`` (and seed 004, which copies it) solves in float32 (its
vectors pass through ``mpi_avg``, which casts to float32) and always runs all ``cg_iters``
iterations. :func:`solver_numerics` switches the step's numerics for the duration of a
``with`` block (a run's hooks do, for ``--spinning_up_cg``).
"""
from contextlib import contextmanager

import numpy as np

from spinup_tf.utils.tf1 import tf, EPS

OUR_CG = dict(dtype=np.float64, residual_tol=1e-10)
"""This project's conjugate gradient: float64, an early exit once r.r <= 1e-10."""

SPINNING_UP_CG = dict(dtype=np.float32, residual_tol=None)
"""Spinning Up's TF1 ``cg``: float32 vectors, ``cg_iters`` iterations always."""

_numerics = dict(OUR_CG)


@contextmanager
def solver_numerics(dtype=np.float64, residual_tol=1e-10):
    """Within the block, :func:`natural_gradient_step` solves in ``dtype`` with the early exit
    ``residual_tol`` (None: none), e.g. ``with solver_numerics(**SPINNING_UP_CG):``."""
    saved = dict(_numerics)
    _numerics.update(dtype=dtype, residual_tol=residual_tol)
    try:
        yield
    finally:
        _numerics.update(saved)


# --------------------------------------------------------------------------------------------
# Graph pieces
# --------------------------------------------------------------------------------------------
def _flat_size(p):
    return int(np.prod(p.shape.as_list()))


def flat_concat(xs):
    """Concatenate tensors of any shapes into one 1-D tensor.

    ========  ===========================  ====================================
    Symbol    Shape                        Description
    ========  ===========================  ====================================
    ``xs``    list of tensors, any shapes  E.g. the policy's variables.
    return    ``(sum of sizes,)``          ``concat([reshape(x, (-1,)) ...])``.
    ========  ===========================  ====================================
    """
    return tf.concat([tf.reshape(x, (-1,)) for x in xs], axis=0)


def flat_grad(f, params):
    """Gradient of the scalar ``f`` w.r.t. ``params``, flattened to ``(n_params,)``.

    A parameter that ``f`` does not depend on gets a zero gradient (``tf.gradients`` returns
    ``None`` for it).
    """
    grads = tf.gradients(xs=params, ys=f)
    grads = [tf.zeros_like(p) if g is None else g for g, p in zip(grads, params)]
    return flat_concat(grads)


def hessian_vector_product(f, params):
    """Hessian-vector product of the scalar ``f`` by double backprop.

    With :math:`g = \\nabla_\\theta f`, :math:`Hx = \\nabla_\\theta (g \\cdot x)`; the Hessian
    is never formed.

    ========  ==================  =================================================
    Symbol    Shape               Description
    ========  ==================  =================================================
    ``x``     ``(n_params,)``     float32 placeholder: the vector to multiply.
    ``Hx``    ``(n_params,)``     Hessian of ``f`` (w.r.t. ``params``) times ``x``.
    ========  ==================  =================================================

    Returns:
        ``(x, Hx)``.
    """
    g = flat_grad(f, params)
    x = tf.placeholder(tf.float32, shape=g.shape)
    return x, flat_grad(tf.reduce_sum(g * x), params)


def assign_params_from_flat(x, params):
    """Op that writes the flat vector ``x`` (``(n_params,)``) back into ``params``.

    Inverse of ``flat_concat(params)``: ``x`` is split in the order of ``params`` and each piece
    reshaped to its variable's shape. Returns a ``tf.group`` of ``tf.assign``.
    """
    splits = tf.split(x, [_flat_size(p) for p in params])
    new_params = [tf.reshape(p_new, p.shape) for p, p_new in zip(params, splits)]
    return tf.group([tf.assign(p, p_new) for p, p_new in zip(params, new_params)])


# --------------------------------------------------------------------------------------------
# Solvers (numpy)
# --------------------------------------------------------------------------------------------
def conjugate_gradient(Ax, b, iters=10, residual_tol=1e-10, dtype=np.float64):
    """Approximately solve :math:`Ax = b` for symmetric positive-definite ``A``.

    Spinning Up's conjugate gradient (with ``EPS`` in the step-size denominator), plus an early
    exit once the squared residual :math:`r^\\top r` falls to ``residual_tol`` or below.
    ``residual_tol=None, dtype=np.float32`` is Spinning Up's own (``SPINNING_UP_CG``): every
    iteration runs, on float32 vectors (if the residual reaches exactly 0 before the last
    iteration, its ``r_new / r_old`` is 0/0 and the result NaN, as there).

    Args:
        Ax: python callable, ``(n,)`` array -> ``A @ x`` as an ``(n,)`` array.
        b: ``(n,)`` right-hand side.
        iters (int): maximum number of CG iterations.
        residual_tol (float): stop when :math:`r^\\top r \\le` this; None: never.
        dtype: the vectors' dtype (``Ax``'s results are cast to it).

    Returns:
        ``(n,)`` array ``x``.
    """
    b = np.asarray(b, dtype=dtype)
    x = np.zeros_like(b)
    r = b.copy()  # residual b - Ax, with x = 0
    p = r.copy()
    r_dot_old = np.dot(r, r)
    if residual_tol is not None and r_dot_old <= residual_tol:
        return x
    for _ in range(iters):
        z = np.asarray(Ax(p), dtype=dtype)
        alpha = r_dot_old / (np.dot(p, z) + EPS)
        x += alpha * p
        r -= alpha * z
        r_dot_new = np.dot(r, r)
        if residual_tol is not None and r_dot_new <= residual_tol:
            break
        with np.errstate(invalid='ignore', divide='ignore'):  # Spinning Up's 0/0: NaN
            p = r + (r_dot_new / r_dot_old) * p
        r_dot_old = r_dot_new
    return x


def natural_gradient_step(g, Hx_fn, delta, cg_iters=10, damping=0.1):
    """The TRPO / NPG step direction and size.

    Solves :math:`(H + \\lambda I) x = g` by conjugate gradient, with :math:`\\lambda` =
    ``damping`` (Spinning Up puts the damping inside its ``Hx``), then scales ``x`` so that the
    quadratic KL model of the step equals ``delta``:

    .. math::
        \\alpha = \\sqrt{\\frac{2\\delta}{x^\\top (H + \\lambda I) x + \\epsilon}},
        \\qquad \\text{full\\_step} = \\alpha x.

    The new parameters are ``old_params - full_step`` (``g`` is the gradient of the loss to
    *minimise*); NPG takes this full step, TRPO backtracks along it
    (:func:`backtracking_line_search`). The arithmetic is in the dtype of
    :func:`solver_numerics` (float64 unless a ``with solver_numerics(...)`` block says
    otherwise), with its early exit.

    Args:
        g: ``(n_params,)`` gradient of the policy loss.
        Hx_fn: python callable, ``(n_params,)`` -> ``H @ x`` (undamped Hessian of the KL).
        delta (float): KL bound.
        cg_iters (int): conjugate-gradient iterations.
        damping (float): :math:`\\lambda` added to the Hessian's diagonal.

    Returns:
        ``(x, alpha, full_step)``.
    """
    dtype = _numerics['dtype']

    def Hx(v):
        return np.asarray(Hx_fn(v), dtype=dtype) + dtype(damping) * v

    x = conjugate_gradient(Hx, g, iters=cg_iters, residual_tol=_numerics['residual_tol'],
                           dtype=dtype)
    alpha = np.sqrt(dtype(2 * delta) / (np.dot(x, Hx(x)) + dtype(EPS)))
    return x, alpha, alpha * x


def backtracking_line_search(set_and_eval, old_params, full_step, max_kl, old_surrogate_loss,
                             backtrack_iters=10, backtrack_coeff=0.8):
    """TRPO's backtracking line search along ``-full_step``.

    Tries ``old_params - backtrack_coeff**j * full_step`` for ``j = 0 .. backtrack_iters - 1``
    and keeps the first one with ``kl <= max_kl`` and ``pi_loss <= old_surrogate_loss``. When
    none passes, the old parameters are restored (``set_and_eval(old_params)``) and ``j`` is
    reported as ``backtrack_iters``.

    Args:
        set_and_eval: python callable, ``(n_params,)`` flat params -> ``(kl, pi_loss)``; it
            sets the policy's parameters (they stay set) and evaluates the mean KL to the old
            policy and the surrogate loss on the batch.
        old_params: ``(n_params,)`` parameters before the update.
        full_step: ``(n_params,)`` from :func:`natural_gradient_step`.
        max_kl (float): KL bound ``delta``.
        old_surrogate_loss (float): surrogate loss at ``old_params``.

    Returns:
        ``(accepted_j, kl, pi_loss)`` of the parameters left set.
    """
    old_params = np.asarray(old_params)
    full_step = np.asarray(full_step)
    for j in range(backtrack_iters):
        kl, pi_loss = set_and_eval(old_params - backtrack_coeff ** j * full_step)
        if kl <= max_kl and pi_loss <= old_surrogate_loss:
            return j, kl, pi_loss
    kl, pi_loss = set_and_eval(old_params)
    return backtrack_iters, kl, pi_loss
