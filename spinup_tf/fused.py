"""The fused update window of the off-policy algorithms: a whole window of gradient steps in
one ``sess.run``.

Spinning Up runs every update as its own ``sess.run`` calls, fed with a numpy batch. Each
call costs far more in TF's per-call overhead than the small networks' arithmetic, so the
updates dominate the wall time. Here one ``sess.run`` per window

1. writes the transitions staged since the last window into the graph's replay buffer
   (``GraphReplayBuffer.write_op``),
2. runs ``n`` updates in a ``tf.while_loop``: each draws its batch in-graph (uniform with
   replacement over the held transitions, like the numpy sampler) and applies the
   algorithm's own update step, built with the same optimizer objects as the plain train ops,
3. returns every update's diagnostics stacked ``(n, ...)`` and the policy's weights after the
   last update (for the numpy actor).

The step function decides the order of its train ops with control dependencies; the loop
makes each iteration wait for the previous one's ops.
"""
from types import SimpleNamespace

from spinup_tf.tf1 import tf
from spinup_tf.graph_replay_buffer import sample_indices, gather_batch


def build_update_window(buffer, batch_size, update_step, diagnostics, weights=(), sampler=None):
    """Build the fused window in the default graph.

    Args:
        buffer: the ``GraphReplayBuffer``.
        batch_size (int): transitions per update.
        update_step: ``update_step(batch, j) -> (train_op, outputs)`` builds update ``j`` of
            the window on ``batch = (obs1, obs2, acts, rews, done)`` tensors (``(batch,
            obs_dim)``, ``(batch, obs_dim)``, ``(batch, act_dim)``, ``(batch,)``,
            ``(batch,)``); ``train_op`` runs its train ops, ``outputs`` maps the names in
            ``diagnostics`` to float32 tensors (their values once ``train_op`` has run).
        diagnostics: names of the per-update outputs to return.
        weights: variables whose values (after the window) are returned too.
        sampler: ``sampler(j) -> (batch,)`` int32 slots; default :func:`sample_indices`
            (tests pass fixed indices to compare with the plain path).

    Returns:
        A namespace with ``n_updates_ph`` (scalar int32 placeholder), ``feed_list`` (the
        staging placeholders, ``filled_ph`` and ``n_updates_ph``, in the order
        ``FusedUpdater`` feeds them), ``outputs`` (name -> ``(n, ...)`` stacked tensor) and
        ``weights`` (tensors of ``weights`` read after the loop).
    """
    n_updates_ph = tf.placeholder(tf.int32, (), name='n_updates')
    if sampler is None:
        def sampler(j):
            return sample_indices(buffer.valid_var, buffer.filled_ph, batch_size)

    def body(j, *arrays):
        batch = gather_batch(buffer, sampler(j), batch_size)
        train_op, outputs = update_step(batch, j)
        with tf.control_dependencies([train_op]):
            written = [ta.write(j, tf.identity(outputs[name]))
                       for ta, name in zip(arrays, diagnostics)]
            return [j + 1] + written

    with tf.name_scope('fused_window'):
        with tf.control_dependencies([buffer.write_op]):
            j0 = tf.identity(tf.constant(0, tf.int32))
        arrays = [tf.TensorArray(tf.float32, size=n_updates_ph, name=name)
                  for name in diagnostics]
        final = tf.while_loop(lambda j, *_: j < n_updates_ph, body, [j0] + arrays,
                              parallel_iterations=1, name='updates')
        if not arrays:  # a single loop variable comes back bare
            final = [final]
        outputs = {name: ta.stack() for name, ta in zip(diagnostics, final[1:])}
        with tf.control_dependencies([final[0]] + list(outputs.values())):
            weight_values = [v.read_value() for v in weights]
    return SimpleNamespace(n_updates_ph=n_updates_ph,
                           feed_list=list(buffer.stage_phs) + [buffer.filled_ph, n_updates_ph],
                           outputs=outputs, weights=weight_values)


class FusedUpdater:
    """Python side of the fused window: ``updater(n)`` runs ``n`` updates in one call.

    Args:
        sess: the session.
        buffer: the ``GraphReplayBuffer`` (attached to ``sess`` here).
        window: what :func:`build_update_window` returned.
        on_outputs: ``on_outputs(outputs)`` gets the dict of stacked diagnostics, e.g. to
            store them in the logger.
        on_weights: ``on_weights(values)`` gets the weights after the window (e.g. the numpy
            actor's ``set_weights``).
    """

    def __init__(self, sess, buffer, window, on_outputs, on_weights=None):
        self.buffer = buffer
        buffer.attach(sess)
        self.names = list(window.outputs)
        self.n_weights = len(window.weights)
        fetches = [window.outputs[k] for k in self.names] + list(window.weights)
        self._run = sess.make_callable(fetches, feed_list=window.feed_list)
        self.on_outputs, self.on_weights = on_outputs, on_weights

    def __call__(self, n_updates):
        buf = self.buffer
        values = self._run(*buf.staged_feeds(), buf.filled, n_updates)
        k = len(self.names)
        self.on_outputs(dict(zip(self.names, values[:k])))
        if self.on_weights is not None and self.n_weights:
            self.on_weights(values[k:])
