"""The plain engine: Spinning Up's way of running an algorithm's steps, one ``sess.run`` per
``train`` call, fed with a numpy batch.

An algorithm describes its update with the steps of ``spinup_tf.engine.steps``; this engine
builds each distinct ``train`` call once, in the graph, as one Spinning Up ``sess.run``
(``spinup_tf.engine.ordering.build_call``: the losses from the parameters before the call,
then the writes in order), and runs it on the batches the loop gives:

* :class:`PlainUpdates`: the off-policy ``update(train, j)``, on batches sampled from a
  numpy replay buffer;
* :class:`PlainEngine` and :class:`Evaluate`: the on-policy ``update(train, evaluate)``, on
  one epoch's data.

The fast engine (``spinup_tf.fast``) computes the same steps with fewer ``sess.run`` calls.
"""
import numpy as np

from spinup_tf.utils.tf1 import tf, lazy_callable
from spinup_tf.engine.ordering import ProgramOrder, build_call
from spinup_tf.engine.steps import Repeat, distinct_calls


class PlainUpdates:
    """The plain engine: every ``train`` call of ``update`` is one ``sess.run``, fed with a
    numpy batch, as in Spinning Up's loop.

    Built in the graph: one op group per distinct call of ``update`` (ordered as one
    Spinning Up ``sess.run`` with chained control dependencies:
    ``spinup_tf.engine.ordering.build_call``). ``diagnostics`` maps each loss function to its
    ``{key: shape}`` (the fast engine's window needs them); ``keys`` lists every key.

    ``gradients=False`` (a run whose updates all go through the fast engine's window) builds
    only what the window needs from here: the losses, for their diagnostics, and the
    optimizers' variables (``build_call``); :meth:`window` is then unavailable. The random
    draws of the losses are built either way, so the window's draws are the same ones.
    """

    def __init__(self, update, batch, batch_transform=None, gradients=True):
        self.update, self.batch, self.gradients = update, batch, gradients
        self.phs = [batch[k] for k in ('obs1', 'obs2', 'acts', 'rews', 'done')]
        fed = batch_transform(dict(batch)) if batch_transform is not None else batch
        self.calls, self.diagnostics = [], {}
        for call in distinct_calls(update):
            out, ops = build_call(ProgramOrder(), call, fed, gradients=gradients)
            merged = {k: v for _, d in out for k, v in d.items()}
            names = sorted(merged)
            self.calls.append((call, names, [merged[k] for k in names] + [tf.group(ops)]))
            for loss_fn, d in out:
                self.diagnostics.setdefault(loss_fn, {k: v.shape.as_list() for k, v in d.items()})
        self.keys = sorted(set(k for d in self.diagnostics.values() for k in d))

    def window(self, sess, replay_buffer, batch_size, logger):
        """``window(n)``: ``n`` updates, each on a fresh numpy batch from ``replay_buffer``;
        the diagnostics go to ``logger``. Each call's callable is made when it first runs
        (the fast engine builds this window too, as its fallback)."""
        if not self.gradients:
            raise RuntimeError('these updates were built without gradients, for the fast '
                               'engine\'s window only')
        runs = [(call, names, lazy_callable(sess, fetches, self.phs))
                for call, names, fetches in self.calls]

        def train_call(feeds):
            def train(*steps):
                for call, names, run in runs:
                    if len(call) == len(steps) and all(a is b for a, b in zip(call, steps)):
                        values = run(*feeds)
                        logger.store(**dict(zip(names, values[:-1])))
                        return
                raise RuntimeError('update made a train call it did not make when traced')
            return train

        def window(n_updates):
            for j in range(n_updates):
                b = replay_buffer.sample_batch(batch_size)
                feeds = (b['obs1'], b['obs2'], b['acts'], b['rews'], b['done'])
                self.update(train_call(feeds), j)
        return window


def _inner(step):
    return step.step if isinstance(step, Repeat) else step


class PlainEngine:
    """Spinning Up's way of training: one ``sess.run`` per gradient step, fed the batch.

    Built in the graph: one op per distinct ``Minimize`` of ``steps`` (alone, or inside a
    ``Repeat``), built by ``spinup_tf.engine.ordering.build_call`` as one Spinning Up
    ``sess.run``: the loss (and its diagnostics) from the parameters before the step, then
    the optimizer's write.
    """

    def __init__(self, steps, batch):
        self.built = {}
        for step in map(_inner, steps):
            if id(step) not in self.built:
                out, ops = build_call(ProgramOrder(), (step,), batch)
                diagnostics = {k: t for _, d in out for k, t in d.items()}
                names = sorted(diagnostics)
                self.built[id(step)] = (names, [tf.group(ops)] + [diagnostics[k]
                                                                  for k in names])

    def bind(self, sess, phs):
        """``train(inputs, step)`` on ``sess``; ``inputs`` in the order of ``phs``."""
        runs = {key: (names, sess.make_callable(fetches, feed_list=phs))
                for key, (names, fetches) in self.built.items()}

        def train(inputs, step):
            names, run = runs[id(_inner(step))]
            if not isinstance(step, Repeat):
                run(*inputs)
                return None
            i = -1
            for i in range(step.n):
                values = run(*inputs)[1:]
                if step.stop is not None and step.stop(
                        {k: np.float64(x) for k, x in zip(names, values)}):
                    return i, True
            return i, False
        return train


class Evaluate:
    """``evaluate(inputs, fetches, feed=None)``: ``sess.run(fetches)`` with ``inputs`` fed to
    the batch's placeholders ``phs`` (those the fetches need) and ``feed`` to others. One
    callable is made per kind of call (no feed-dict building or fetch lookup per call)."""

    def __init__(self, sess, phs):
        self.sess, self.phs, self.callables = sess, list(phs), {}

    def __call__(self, inputs, fetches, feed=None):
        feed = feed or {}
        extra = list(feed)
        key = (repr(tf.nest.map_structure(lambda t: t.name, fetches)),
               tuple(t.name for t in extra))
        if key not in self.callables:
            needed = _placeholders_needed(fetches)
            used = [i for i, ph in enumerate(self.phs) if ph.op in needed]
            run = self.sess.make_callable(fetches, feed_list=[self.phs[i] for i in used]
                                          + extra)
            self.callables[key] = (used, run)
        used, run = self.callables[key]
        return run(*([inputs[i] for i in used] + [feed[t] for t in extra]))


def _placeholders_needed(fetches):
    """The ops ``fetches`` depend on (inputs and control inputs, transitively)."""
    stack = [t.op if hasattr(t, 'op') else t for t in tf.nest.flatten(fetches)]
    seen = set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return seen
