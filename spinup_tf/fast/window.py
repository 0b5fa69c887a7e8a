"""The fast engine's off-policy update window: a whole window of updates in one ``sess.run``.

Spinning Up runs every update as its own ``sess.run`` calls, fed with a numpy batch; each
call costs far more in TF's per-call overhead than the small networks' arithmetic. Here one
``sess.run`` per window

1. writes the transitions staged since the last window into the graph's replay buffer
   (``GraphReplayBuffer.write_op``),
2. runs the window's ``n`` updates: the algorithm's own ``update(train, j)``
   (``spinup_tf.engine.steps``), unrolled for one period of its schedule and looped with
   ``tf.while_loop``; each update draws its batch in-graph (uniform with replacement, like
   the numpy sampler) and builds the algorithm's steps on it, read and write hazards ordered
   by ``spinup_tf.engine.ordering.ProgramOrder``,
3. returns every update's diagnostics, stacked per key, and the policy's weights after the
   last update (for the numpy actor).

The schedule is static: ``update`` is traced for ``j < period`` in Python, so no ``tf.cond``
decides anything at run time. A loop iteration runs ``chunk`` updates (a multiple of the
period, at least 2, so that consecutive updates overlap where they share no variable). A
window of ``n = k * chunk + r`` updates runs ``k`` iterations, then ``r`` unrolled updates:
one fetch per ``r`` is built, all sharing the loop; a run whose windows all have one size
builds only the ``r`` of that size (``sizes``), and each fetch's callable is made when it first
runs, so a short run that never updates never pays for Grappler's pass over the window.
"""
from types import SimpleNamespace

from spinup_tf.utils.tf1 import tf, lazy_callable
from spinup_tf.engine.steps import period, trace
from spinup_tf.engine.ordering import ProgramOrder, build_call
from spinup_tf.fast.graph_replay_buffer import (sample_indices, sample_distinct_indices,
                                                gather_batch)


class NoFastPath(Exception):
    """The update cannot run in the fused window; the plain engine runs it (a log line
    says why)."""


def build_window(buffer, batch_size, update, diagnostics, weights=(), sampler=None,
                 batch_transform=None, sizes=None):
    """Build the fused window in the default graph.

    Args:
        buffer: the ``GraphReplayBuffer``.
        batch_size (int): transitions per update.
        update: the algorithm's ``update(train, j)``.
        diagnostics: ``{loss_fn: {key: shape}}``: the diagnostics each loss function
            returns and their shapes for one update (the plain engine's build tells them).
        weights: variables whose values (after the window) are returned too.
        sampler: ``sampler(j) -> (batch,)`` int32 slots of update ``j`` (an int32 tensor,
            the update's index in the window); default ``sample_indices`` (or
            ``sample_distinct_indices`` for a buffer without replacement; tests pass
            fixed indices to compare with the plain engine).
        batch_transform: ``batch_transform(batch) -> batch`` applied to every batch, or
            None.
        sizes: the window sizes (updates) the run will ask for, or None for any size. Only
            the tails ``r = size % chunk`` they need are built (their random draws are the
            last ones built, so leaving one out changes no other draw).

    Returns:
        A namespace with ``chunk``, ``feed_list`` (the staging placeholders, ``filled_ph``,
        ``n_chunks_ph``), ``fetches`` (``{r: ({key: (count, ...) stacked values}, weights)}``
        for a window of ``k * chunk + r`` updates, for each ``r`` built).
    """
    p = period(update)
    if p is None:
        raise NoFastPath('the update\'s schedule does not repeat within 12 updates')
    chunk = p * -(-2 // p)  # the smallest multiple of the period that is at least 2
    schedule = trace(update, chunk)
    n_chunks_ph = tf.placeholder(tf.int32, (), name='n_chunks')
    if sampler is None:
        draw = sample_indices if buffer.with_replacement else sample_distinct_indices

        def sampler(j):
            return draw(buffer.valid_var, buffer.filled_ph, batch_size)

    def updates(first, count, start, arrays, index_base):
        """``count`` unrolled updates, the first being update ``first`` of the window;
        diagnostic ``key``'s ``i``-th value goes to ``arrays[key]`` at ``index_base[key] +
        i``. Returns the arrays and the ops a later update must wait for."""
        order = ProgramOrder(start)
        written = {key: 0 for key in arrays}
        for i in range(count):
            # Batches are drawn after ``start``, hence after the window's buffer write.
            with tf.control_dependencies(start):
                obs1, obs2, acts, rews, done = gather_batch(buffer, sampler(first + i),
                                                            batch_size)
            batch = dict(obs1=obs1, obs2=obs2, acts=acts, rews=rews, done=done)
            if batch_transform is not None:
                batch = batch_transform(batch)
            for call in schedule[i]:
                out, _ = build_call(order, call, batch)
                for key, value in [kv for _, d in out for kv in sorted(d.items())]:
                    arrays[key] = arrays[key].write(index_base[key] + written[key],
                                                    tf.cast(value, tf.float32))
                    written[key] += 1
        return arrays, order.frontier(), written

    def values_per(calls_of_updates):
        counts = {}
        for calls in calls_of_updates:
            for call in calls:
                for fn in _distinct(step.loss_fn for step in call if hasattr(step, 'loss_fn')):
                    for key in diagnostics[fn]:
                        counts[key] = counts.get(key, 0) + 1
        return counts

    per_chunk = values_per(schedule)
    shapes = {key: shape for fn_keys in diagnostics.values() for key, shape in fn_keys.items()}
    keys = sorted(shapes)
    with tf.name_scope('fused_window'):
        with tf.control_dependencies([buffer.write_op]):
            c0 = tf.identity(tf.constant(0, tf.int32))
        arrays0 = {key: tf.TensorArray(tf.float32, size=0, dynamic_size=True,
                                       element_shape=shapes[key], name=key)
                   for key in keys}

        def body(c, *flows):
            arrays = dict(zip(keys, flows))
            base = {key: c * per_chunk.get(key, 0) for key in keys}
            arrays, frontier, _ = updates(c * chunk, chunk, [c], arrays, base)
            with tf.control_dependencies(frontier):
                return [c + 1] + [arrays[key] for key in keys]

        final = tf.while_loop(lambda c, *_: c < n_chunks_ph, body,
                              [c0] + [arrays0[key] for key in keys],
                              parallel_iterations=1, name='chunks')
        final = final if keys else [final]  # a loop of one variable returns it bare
        c_end, loop_arrays = final[0], dict(zip(keys, final[1:]))

        fetches = {}
        tails = range(chunk) if sizes is None else sorted({int(n) % chunk for n in sizes})
        for r in tails:
            with tf.name_scope('tail_%d' % r):
                base = {key: c_end * per_chunk.get(key, 0) for key in keys}
                arrays, frontier, _ = updates(c_end * chunk, r, [c_end], dict(loop_arrays),
                                              base)
                with tf.control_dependencies(frontier):
                    outputs = {key: arrays[key].stack() for key in keys}
                with tf.control_dependencies(frontier + list(outputs.values())):
                    weight_values = [tf.identity(v) for v in weights]
            fetches[r] = (outputs, weight_values)
    return SimpleNamespace(chunk=chunk, n_chunks_ph=n_chunks_ph, fetches=fetches,
                           feed_list=list(buffer.stage_phs) + [buffer.filled_ph, n_chunks_ph])


def _distinct(items):
    out = []
    for item in items:
        if not any(item is seen for seen in out):
            out.append(item)
    return out


class FusedUpdater:
    """Python side of the fused window: ``updater(n)`` runs ``n`` updates in one call.

    Args:
        sess: the session.
        buffer: the ``GraphReplayBuffer`` (attached to ``sess`` here).
        window: what :func:`build_window` returned.
        on_outputs: ``on_outputs(outputs)`` gets the dict of stacked diagnostics, e.g. to
            store them in the logger.
        on_weights: ``on_weights(values)`` gets the weights after the window (e.g. the numpy
            actor's ``set_weights``).
    """

    def __init__(self, sess, buffer, window, on_outputs, on_weights=None):
        self.buffer, self.chunk = buffer, window.chunk
        buffer.attach(sess)
        self.names = sorted(next(iter(window.fetches.values()))[0])
        self._runs = {r: lazy_callable(sess, [outputs[k] for k in self.names] + list(weights),
                                       window.feed_list)
                      for r, (outputs, weights) in window.fetches.items()}
        self.on_outputs, self.on_weights = on_outputs, on_weights

    def _run(self, r):
        if r not in self._runs:
            raise ValueError('no fused window was built for %d updates modulo %d'
                             % (r, self.chunk))
        return self._runs[r]

    def __call__(self, n_updates):
        k, r = divmod(int(n_updates), self.chunk)
        buf = self.buffer
        values = self._run(r)(*buf.staged_feeds(), buf.filled, k)
        n = len(self.names)
        self.on_outputs(dict(zip(self.names, values[:n])))
        if self.on_weights is not None and len(values) > n:
            self.on_weights(values[n:])
