"""``torch.optim.Adam``'s update as a ``tf.compat.v1`` optimizer (seed 001 v2, the udemy
PyTorch TD3: ``torch.optim.Adam(self.actor.parameters())``, lines 1386 and 1390).

Both optimizers keep the same moments, with the step count :math:`t` and
:math:`\\hat m = m_t / (1 - \\beta_1^t)`, :math:`\\hat v = v_t / (1 - \\beta_2^t)`:

.. math::
    m_t = \\beta_1 m_{t-1} + (1 - \\beta_1) g, \\qquad v_t = \\beta_2 v_{t-1} + (1 - \\beta_2) g^2

They differ in where :math:`\\epsilon` goes. ``torch.optim.Adam`` (since PyTorch 1.3, pull
request 22628) adds it after the bias correction, as the Adam paper writes it:

.. math::
    \\theta \\leftarrow \\theta - \\frac{lr}{1 - \\beta_1^t} \\,
    \\frac{m_t}{\\sqrt{v_t} / \\sqrt{1 - \\beta_2^t} + \\epsilon}

``tf.train.AdamOptimizer`` adds it before (its docstring's "epsilon hat"):

.. math::
    \\theta \\leftarrow \\theta - lr \\frac{\\sqrt{1 - \\beta_2^t}}{1 - \\beta_1^t} \\,
    \\frac{m_t}{\\sqrt{v_t} + \\hat\\epsilon}

so TF's update is torch's with :math:`\\epsilon` scaled by :math:`1 / \\sqrt{1 - \\beta_2^t}`
(31.6x at the first step with :math:`\\beta_2 = 0.999`, 1.0005x after 5000 steps). The two
differ only where :math:`\\sqrt{v_t}` is as small as :math:`\\epsilon`.

:class:`TorchAdamOptimizer` keeps ``AdamOptimizer``'s slots (``m``, ``v``), its beta-power
accumulators and the order of its writes (the accumulators advance after every variable's
update, in ``_finish``), and replaces only the update with torch's, built from TF ops.
"""
from spinup_tf.utils.tf1 import tf


class TorchAdamOptimizer(tf.train.AdamOptimizer):
    """``torch.optim.Adam(params, lr, betas=(beta1, beta2), eps=epsilon)`` (no weight decay,
    no AMSGrad) as a ``tf.train.Optimizer``: use it as ``tf.train.AdamOptimizer``. A sparse
    gradient is applied as the dense one it stands for (torch's ``Adam`` on a dense
    parameter: rows without a gradient still decay their moments and move)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name='TorchAdam'):
        super().__init__(learning_rate=learning_rate, beta1=beta1, beta2=beta2,
                         epsilon=epsilon, use_locking=use_locking, name=name)

    def _torch_update(self, grad, var):
        dtype = var.dtype.base_dtype
        m, v = self.get_slot(var, 'm'), self.get_slot(var, 'v')
        beta1_power, beta2_power = self._get_beta_accumulators()  # beta^t for this step
        lr = tf.cast(self._lr_t, dtype)
        beta1, beta2 = tf.cast(self._beta1_t, dtype), tf.cast(self._beta2_t, dtype)
        eps = tf.cast(self._epsilon_t, dtype)
        bias_correction1 = 1 - tf.cast(beta1_power, dtype)
        bias_correction2 = 1 - tf.cast(beta2_power, dtype)
        m_t = beta1 * m + (1 - beta1) * grad
        v_t = beta2 * v + (1 - beta2) * tf.square(grad)
        denom = tf.sqrt(v_t) / tf.sqrt(bias_correction2) + eps
        step = (lr / bias_correction1) * (m_t / denom)
        return tf.group(tf.assign(m, m_t, use_locking=self._use_locking),
                        tf.assign(v, v_t, use_locking=self._use_locking),
                        tf.assign_sub(var, step, use_locking=self._use_locking))

    def _apply_dense(self, grad, var):
        return self._torch_update(grad, var)

    def _resource_apply_dense(self, grad, var):
        return self._torch_update(grad, var)

    def _apply_sparse(self, grad, var):
        return self._torch_update(tf.convert_to_tensor(grad), var)

    def _resource_apply_sparse(self, grad, var, indices):
        dense = tf.math.unsorted_segment_sum(grad, indices, tf.shape(var)[0])
        return self._torch_update(dense, var)
