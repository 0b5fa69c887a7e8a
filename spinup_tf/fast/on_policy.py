"""The fast on-policy engine (VPG, PPO, TRPO/NPG): the same algorithm with far fewer
``sess.run`` calls.

Its equivalence contract, which ``tests/test_ppo_vpg.py`` and ``tests/test_numpy_onpolicy.py``
check on fixed batches:

* **Training** (:class:`FastTraining`): the update's ``train(fetches, n)`` of ``n > 1``
  gradient steps on one of the algorithm's lists (``train_ops(batch)[name]``: the
  ``train_v_iters`` value steps; PPO's policy steps with their early stop on KL) runs as one
  ``tf.while_loop`` in one ``sess.run``. Each iteration calls the algorithm's own
  ``train_ops`` on the same placeholders the plain loop feeds, so the loss, the
  ``optimizer.minimize`` op and the list's ``stop`` are the algorithm's, built once more;
  :class:`~spinup_tf.fast.hazards.Hazards` then orders the iteration's variable reads
  after the previous iteration's writes (and its writes after those reads), as ``n``
  separate ``sess.run`` calls order them. The variables it leaves (networks, Adam's slots
  and beta powers), the number of steps and whether ``stop`` ended them are those of the
  plain loop's ``n`` ``sess.run`` calls (``loops.on_policy.plain_train``) on the same
  batch, to float rounding. A single step, the losses logged before and after, and TRPO's
  natural-gradient step are one ``sess.run`` each, as in the plain loop.
* **Acting** (:class:`FastActing`): the policy is fixed while an epoch is collected, so a
  numpy mirror of the policy and value function (``onpolicy_mirrors``), pulled once per
  epoch and checked against the graph at start-up, acts: it gives the graph's distribution
  parameters, values and log-likelihoods to float32 rounding, and samples actions from
  numpy's global RNG (seeded by ``Setup``, kept in checkpoints) instead of the graph's
  sampler. So the two engines give different, equally valid, runs of a seed; each repeats
  byte for byte.
* **Fallback**: a policy that cannot be mirrored acts through the graph, and a list that
  cannot be looped (its ops write no resource variable that :mod:`~spinup_tf.fast.hazards`
  can see, or ``train_ops`` fails to build inside a loop) trains through the plain loop,
  each with one line in the log.
"""
from spinup_tf.utils.tf1 import tf, lazy_callable
from spinup_tf.fast.hazards import Hazards, NewOps
from spinup_tf.fast.mirrors import NoMirror
from spinup_tf.fast.onpolicy_mirrors import actor_critic_layers, numpy_actor_critic


class NoLoop(Exception):
    """A list cannot run as a while loop; the plain loop runs it."""


def train_loop(train_ops, name, batch, n_steps):
    """Up to ``n_steps`` runs of list ``name`` of ``train_ops(batch)`` as one while loop.

    Each iteration builds ``train_ops(batch)`` afresh and orders the accesses of the list's
    ops to variables after the previous iteration's (:class:`Hazards` started at the loop's
    counters), so every step reads the parameters and optimizer state the step before it
    left. The loop ends after ``n_steps`` steps, or after the step whose ``stop`` entry
    (computed, like the step's gradient, from the parameters before its write) is true.

    Args:
        train_ops: the algorithm's ``train_ops(batch) -> {name: {key: tensor or op}}``.
        name: the list to loop.
        batch: the tensors ``train_ops`` is built on (the placeholders).
        n_steps: scalar int32 tensor, the most steps to take.

    Returns:
        ``(steps, stopped)``: int32 number of steps taken, bool whether ``stop`` ended them.

    Raises:
        NoLoop: the list's ops write no resource variable (their accesses could not be
            ordered), or ``train_ops`` failed to build inside the loop.
    """
    unordered = []

    def body(i, stopped):
        hazards = Hazards([i, stopped])
        with NewOps() as new:
            fetches = train_ops(batch)[name]
        hazards.add(fetches, new.ops)
        if not hazards.last_writes:
            unordered.append(name)
        stop = fetches.get('stop', False)
        with tf.control_dependencies(hazards.frontier()):
            return i + 1, tf.identity(tf.convert_to_tensor(stop, tf.bool))

    def cond(i, stopped):
        return tf.logical_and(i < n_steps, tf.logical_not(stopped))

    try:
        loop = tf.while_loop(cond, body, [tf.constant(0), tf.constant(False)],
                             parallel_iterations=1, back_prop=False, name='fast_' + name)
    except Exception as e:  # any failure of a custom loss inside a loop: run it plainly
        raise NoLoop('%s: %s' % (type(e).__name__, e)) from e
    if unordered:
        raise NoLoop('list %r writes no resource variable whose reads and writes could be '
                     'ordered' % name)
    return loop


class FastTraining:
    """The while loops of the lists of ``lists`` that train (hold an op), built in the
    default graph from ``train_ops`` after ``lists`` (the optimizers' slots exist by then).

    Args:
        train_ops: the algorithm's ``train_ops(batch)``.
        lists: ``train_ops(batch)`` on the placeholders, as the update runs them.
        batch: the placeholders.
    """

    def __init__(self, train_ops, lists, batch):
        self.lists, self.loops, self.reasons = lists, {}, []
        self.n_steps = tf.placeholder(tf.int32, (), name='train_steps')
        for name, fetches in lists.items():
            if any(isinstance(v, tf.Operation) for v in fetches.values()):
                try:
                    self.loops[name] = train_loop(train_ops, name, batch, self.n_steps)
                except NoLoop as e:
                    self.reasons.append(str(e))

    def bind(self, sess, phs, plain_train, logger=None):
        """``train(inputs, fetches, n=1)``: ``n > 1`` steps of a looped list in one
        ``sess.run``, anything else through ``plain_train``. A loop's callable is made at
        its first run."""
        if self.reasons and logger is not None:
            logger.log('Training loops through the plain engine: %s' % self.reasons[0],
                       'yellow')
        runs = {id(self.lists[name]): lazy_callable(sess, loop, list(phs) + [self.n_steps])
                for name, loop in self.loops.items()}

        def train(inputs, fetches, n=1):
            run = runs.get(id(fetches))
            if run is None or n == 1:
                return plain_train(inputs, fetches, n)
            steps, stopped = run(*inputs, n)
            return int(steps) - 1, bool(stopped)
        return train


class FastActing:
    """The numpy mirror of the policy and value function (``onpolicy_mirrors``).

    Args:
        policy: the acting tensors: ``x_ph``, ``a_ph``, ``info``, ``v``, ``logp`` (of
            ``a_ph``).
        action_space: ``Discrete`` or ``Box``.

    Reads the networks' structure at build time (no session needed).
    """

    def __init__(self, policy, action_space):
        self.policy = policy
        try:
            self.layers, self.reason = actor_critic_layers(policy, action_space), None
        except NoMirror as e:
            self.layers, self.reason = None, str(e)

    def start(self, sess, obs_dim, logger, step, value):
        """``(step, value, new_policy)``: the mirror's, with ``new_policy`` pulling its
        weights; or the graph's ``step``/``value`` given and None when it cannot be
        mirrored (with a line in the log)."""
        if self.layers is None:
            logger.log('Acting through the graph (one sess.run per step): %s' % self.reason,
                       'yellow')
            return step, value, None
        ac = numpy_actor_critic(sess, self.policy, self.layers, obs_dim, logger)
        if ac is None:
            return step, value, None
        return ac.step, ac.value, lambda: ac.pull(sess)

