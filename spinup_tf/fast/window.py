"""The fast engine's off-policy update window: a whole window of updates in one ``sess.run``.

Spinning Up runs every update as its own ``sess.run`` calls, fed with a numpy batch; each
call costs far more in TF's per-call overhead than the small networks' arithmetic. Here one
``sess.run`` per window

1. writes the transitions staged since the last window into the graph's replay buffer
   (``GraphReplayBuffer.write_op``),
2. runs the window's ``n`` updates: for each, a batch drawn in the graph (uniform with
   replacement, like the numpy sampler), the algorithm's own ``train_ops(batch)`` built on
   it, and the lists its ``update(j)`` names, ordered one after the other as separate
   ``sess.run`` calls would be (``spinup_tf.fast.hazards``); unrolled for one period of the
   schedule and looped with ``tf.while_loop``,
3. returns every update's diagnostics, stacked per key, and the policy's weights after the
   last update (for the numpy actor).

The schedule is static: ``update`` is traced for ``j < period`` in Python (:func:`period`),
so no ``tf.cond`` decides anything at run time. A loop iteration runs ``chunk`` updates (a
multiple of the period, at least 2, so that consecutive updates overlap where they share no
variable). A window of ``n = k * chunk + r`` updates runs ``k`` iterations, then ``r``
unrolled updates: one fetch per ``r`` is built, all sharing the loop; a run whose windows all
have one size builds only the ``r`` of that size (``sizes``), and each fetch's callable is made
when it first runs, so a short run that never updates never pays for Grappler's pass over the
window.
"""
from types import SimpleNamespace

from spinup_tf.utils.tf1 import tf, lazy_callable
from spinup_tf.fast.hazards import Hazards, NewOps
from spinup_tf.fast.graph_replay_buffer import (sample_indices, sample_distinct_indices,
                                                gather_batch)


class NoFastPath(Exception):
    """The update cannot run in the fused window; the plain loop runs it (a log line
    says why)."""


def schedule(update, n):
    """``[update(j) for j < n]``, each a tuple of list names."""
    return [tuple(update(j)) for j in range(n)]


def period(update, longest=12):
    """The smallest ``p <= longest`` with ``update(j) == update(j % p)`` (TD3's is
    ``policy_delay``, SAC's 1), or None when there is none."""
    names = schedule(update, 2 * longest)
    for p in range(1, longest + 1):
        if all(names[j] == names[j % p] for j in range(len(names))):
            return p
    return None


def diagnostics(fetches):
    """``{key: tensor}``: what a list logs (its tensors; its ops are what it runs)."""
    return {k: v for k, v in fetches.items() if isinstance(v, tf.Tensor)}


def build_window(buffer, batch_size, train_ops, update, list_shapes, weights=(), sampler=None,
                 batch_transform=None, sizes=None):
    """Build the fused window in the default graph.

    Args:
        buffer: the ``GraphReplayBuffer``.
        batch_size (int): transitions per update.
        train_ops: the algorithm's ``train_ops(batch) -> {name: {key: tensor or op}}``.
        update: the algorithm's ``update(j) -> names`` of the lists update ``j`` runs.
        list_shapes: ``{name: {key: shape}}``: each list's diagnostics and their shapes
            (``None`` dimensions are the batch's), from the lists built on placeholders.
        weights: variables whose values (after the window) are returned too.
        sampler: ``sampler(j) -> (batch,)`` int32 slots of update ``j`` (an int32 tensor,
            the update's index in the window); default ``sample_indices`` (or
            ``sample_distinct_indices`` for a buffer without replacement; tests pass
            fixed indices to compare with the plain loop).
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
    names_of = schedule(update, chunk)
    n_chunks_ph = tf.placeholder(tf.int32, (), name='n_chunks')
    if sampler is None:
        draw = sample_indices if buffer.with_replacement else sample_distinct_indices

        def sampler(j):
            return draw(buffer.valid_var, buffer.filled_ph, batch_size)
    shapes = {key: [batch_size if n is None else n for n in shape]
              for keys in list_shapes.values() for key, shape in keys.items()}

    def updates(first, count, start, arrays, index_base):
        """``count`` unrolled updates, the first being update ``first`` of the window;
        diagnostic ``key``'s ``i``-th value goes to ``arrays[key]`` at ``index_base[key] +
        i``. Returns the arrays and the ops a later update must wait for."""
        hazards = Hazards(start)
        written = {key: 0 for key in arrays}
        for i in range(count):
            # Batches are drawn after ``start``, hence after the window's buffer write.
            with tf.control_dependencies(start):
                obs1, obs2, acts, rews, done = gather_batch(buffer, sampler(first + i),
                                                            batch_size)
            batch = dict(obs1=obs1, obs2=obs2, acts=acts, rews=rews, done=done)
            if batch_transform is not None:
                batch = batch_transform(batch)
            with NewOps() as new:
                lists = train_ops(batch)
            for name in names_of[i]:
                hazards.add(lists[name], new.ops)
                for key, value in sorted(diagnostics(lists[name]).items()):
                    arrays[key] = arrays[key].write(index_base[key] + written[key],
                                                    tf.cast(value, tf.float32))
                    written[key] += 1
        return arrays, hazards.frontier()

    per_chunk = {}  # values of each key one loop iteration writes
    for names in names_of:
        for key in (k for name in names for k in list_shapes[name]):
            per_chunk[key] = per_chunk.get(key, 0) + 1
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
            arrays, frontier = updates(c * chunk, chunk, [c], arrays, base)
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
                arrays, frontier = updates(c_end * chunk, r, [c_end], dict(loop_arrays),
                                              base)
                with tf.control_dependencies(frontier):
                    outputs = {key: arrays[key].stack() for key in keys}
                with tf.control_dependencies(frontier + list(outputs.values())):
                    weight_values = [tf.identity(v) for v in weights]
            fetches[r] = (outputs, weight_values)
    return SimpleNamespace(chunk=chunk, n_chunks_ph=n_chunks_ph, fetches=fetches,
                           feed_list=list(buffer.stage_phs) + [buffer.filled_ph, n_chunks_ph])


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
