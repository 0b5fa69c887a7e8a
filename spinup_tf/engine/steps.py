"""What one update of an algorithm does, said once, for every engine to build.

An algorithm describes its train ops as *steps* and its update as a plain function of the
update's index ``j``; it never says how they run. Spinning Up writes::

    outs = sess.run([q_loss, q1, q2, train_q_op], feed_dict)
    if j % policy_delay == 0:
        outs = sess.run([pi_loss, train_pi_op, target_update], feed_dict)

Here the same update reads::

    def update(train, j):
        train(q_step)
        if j % policy_delay == 0:
            train(pi_step, target_update)

with ``q_step = Minimize(q_loss, q_optimizer, q_vars)`` and ``target_update =
Polyak(polyak)``. The engines of ``spinup_tf.loops`` (placeholders, one ``sess.run`` per
``train`` call) and ``spinup_tf.fast`` (batches drawn in the graph, a whole window of updates
in one ``sess.run``) build these steps on their own batches.

The meaning of ``train(*steps)`` is that of one Spinning Up ``sess.run`` with its train ops
chained by control dependencies: every loss of the call is computed from the parameters as
they were before the call; the writes then happen in the order given, and a ``Polyak`` step
reads the parameters left by the writes before it.

Contract for the loss functions (what lets an engine rebuild a step on any batch):

* ``loss_fn(batch) -> (loss, diagnostics)``: ``batch`` maps ``'obs1', 'obs2', 'acts',
  'rews', 'done'`` (off-policy) or the on-policy buffer's names to tensors; ``loss`` is a
  scalar; ``diagnostics`` maps logger keys (``'LossQ'``, ``'Q1Vals'``...) to tensors;
* every variable is reached through ``tf.get_variable`` under ``tf.variable_scope(...,
  reuse=True)``, as the actor-critics' layers do (an engine orders the reads through the
  scope's custom getter);
* ``update(train, j)`` depends on ``j`` only, and calls ``train`` in the same way for the
  same ``j`` (the engines trace it ahead of time).
"""


class Minimize:
    """One optimizer step: minimise ``loss_fn(batch)[0]`` with ``optimizer`` over ``var_list``.

    Args:
        loss_fn: ``loss_fn(batch) -> (loss, diagnostics)`` (see the module's contract).
        optimizer: a ``tf.train`` optimizer, built once: every engine applies this step
            through the same object, so its slots (Adam's moments, beta powers) are shared.
        var_list: the variables the step changes.
        loss (str): for a ``loss_fn`` that computes several losses from one forward pass
            (SAC's), returning ``(dict of losses, diagnostics)``: the key of this step's.
            Steps of one ``train`` call that share a ``loss_fn`` share its evaluation.
        max_grad_norm (float): None, or the gradients are rescaled to this global norm
            when theirs is larger (``tf.clip_by_global_norm``, as SB3's DQN does):

            .. math:: g \\leftarrow g \\cdot \\min(1, c / \\|g\\|_2)
    """

    def __init__(self, loss_fn, optimizer, var_list, loss=None, max_grad_norm=None):
        self.loss_fn, self.optimizer, self.var_list = loss_fn, optimizer, list(var_list)
        self.loss, self.max_grad_norm = loss, max_grad_norm

    def pick(self, losses):
        """This step's loss from what ``loss_fn`` returned first."""
        return losses if self.loss is None else losses[self.loss]


class Polyak:
    """The target networks' polyak update, ``tf1.polyak_update_op``:

    .. math:: \\theta_{\\text{targ}} \\leftarrow \\rho \\theta_{\\text{targ}} + (1-\\rho) \\theta

    for every variable of ``main`` paired with ``target`` (by name under the scope).
    """

    def __init__(self, polyak, main_scope='main', target_scope='target'):
        self.polyak, self.main_scope, self.target_scope = polyak, main_scope, target_scope


class Repeat:
    """``n`` steps of ``step`` (a ``Minimize``) one after the other on the same batch;
    after each, stop early if ``stop(diagnostics)`` holds for the diagnostics computed before
    that step's write (PPO's early stop on KL).

    ``stop`` must work on numpy values and on tensors alike (comparisons such as ``lambda d:
    d['KL'] > 0.015`` do); the engines give it float64 values.
    """

    def __init__(self, step, n, stop=None):
        self.step, self.n, self.stop = step, int(n), stop


def trace(update, n):
    """The calls ``update(train, j)`` makes for ``j < n``: a list of tuples of steps, one
    per ``train`` call, for each ``j``."""
    schedule = []
    for j in range(n):
        calls = []
        update(lambda *steps: calls.append(tuple(steps)), j)
        schedule.append(calls)
    return schedule


def period(update, longest=12):
    """The smallest ``p <= longest`` with ``update``'s calls at ``j`` equal to those at ``j %
    p`` (TD3's is ``policy_delay``, SAC's 1), or None when there is none."""
    schedule = trace(update, 2 * longest)
    for p in range(1, longest + 1):
        if all(_same(schedule[j], schedule[j % p]) for j in range(len(schedule))):
            return p
    return None


def _same(calls_a, calls_b):
    return len(calls_a) == len(calls_b) and all(
        len(a) == len(b) and all(x is y for x, y in zip(a, b)) for a, b in zip(calls_a, calls_b))


def distinct_calls(update, n=24):
    """Every distinct ``train`` call (tuple of steps) ``update`` makes for ``j < n``, in the
    order first made."""
    out = []
    for calls in trace(update, n):
        for call in calls:
            if not any(_same([call], [c]) for c in out):
                out.append(call)
    return out
