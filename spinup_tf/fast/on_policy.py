"""The fast on-policy engine (VPG, PPO, TRPO/NPG): the same algorithm with far fewer
``sess.run`` calls.

Its equivalence contract, which ``tests/test_ppo_vpg.py`` and ``tests/test_numpy_onpolicy.py``
check on fixed batches:

* **Training** (:class:`FastTraining`): ``train(Repeat(step, n, stop))`` runs as one
  ``tf.while_loop`` in one ``sess.run`` (the ``train_v_iters`` value steps; PPO's policy
  steps with their early stop on KL). Each iteration builds the algorithm's own
  ``step.loss_fn`` on the same placeholders the plain engine feeds, its reads ordered after
  the previous iteration's writes by ``ordering.ProgramOrder``'s custom getter, and applies
  the gradient through the step's own optimizer object. The variables it leaves (networks,
  Adam's slots and beta powers), the number of steps and whether ``stop`` ended them are
  those of the plain engine's ``n`` ``sess.run`` calls (``loops.on_policy.PlainEngine``) on
  the same batch, to float rounding; ``stop`` sees the same diagnostics, cast to float64 as
  numpy's are. Anything else (a single ``Minimize``, TRPO's natural-gradient step, the
  losses logged before and after) runs through the plain engine.
* **Acting** (:class:`FastActing`): the policy is fixed while an epoch is collected, so a
  numpy mirror of the policy and value function (``onpolicy_mirrors``), pulled once per
  epoch and checked against the graph at start-up, acts: it gives the graph's distribution
  parameters, values and log-likelihoods to float32 rounding, and samples actions from
  numpy's global RNG (seeded by ``Setup``, kept in checkpoints) instead of the graph's
  sampler. So the two engines give different, equally valid, runs of a seed; each repeats
  byte for byte.
* **Fallback**: a policy that cannot be mirrored acts through the graph, and a step that
  cannot be looped (its loss function does not reach its variables through
  ``tf.get_variable``, or fails to build in a loop) trains through the plain engine, each
  with one line in the log.
"""
from spinup_tf.utils.tf1 import tf
from spinup_tf.engine.steps import Repeat
from spinup_tf.engine.ordering import ProgramOrder, build_call
from spinup_tf.fast.mirrors import NoMirror
from spinup_tf.fast.onpolicy_mirrors import actor_critic_layers, numpy_actor_critic


class NoLoop(Exception):
    """A ``Repeat`` cannot run as a while loop; the plain engine runs it."""


class _Reads(ProgramOrder):
    """``ProgramOrder`` that also remembers which variables were read through its getter."""

    def __init__(self, start=()):
        super().__init__(start)
        self.read_names = set()

    def read(self, var):
        self.read_names.add(var.op.name)
        return super().read(var)


def repeat_loop(repeat, batch):
    """``repeat`` (a ``Repeat`` of one ``Minimize``) on ``batch`` as one while loop.

    Each iteration is one ``build_call`` of the step, ordered after the previous iteration
    by a ``ProgramOrder`` that starts at the loop's counters: the loss is built from the
    parameters the previous step left, and the next iteration waits for this one's writes
    and reads. The loop ends after ``repeat.n`` steps, or after the step whose diagnostics
    (measured before its write, as the plain engine's fetch is) make ``repeat.stop`` true.

    Returns:
        ``(steps, stopped)``: int32 number of steps taken, bool whether ``stop`` ended them.

    Raises:
        NoLoop: a variable of the step was not read through ``tf.get_variable`` (its reads
            could not be ordered), or the loss failed to build inside the loop.
    """
    step = repeat.step
    missed = []

    def body(i, stopped):
        order = _Reads([i, stopped])
        out, _ = build_call(order, (step,), batch)
        missed.extend(v.op.name for v in step.var_list if v.op.name not in order.read_names)
        stop = False
        if repeat.stop is not None:
            stop = repeat.stop({k: tf.cast(t, tf.float64) for _, d in out for k, t in d.items()})
        with tf.control_dependencies(order.frontier()):
            return i + 1, tf.identity(tf.convert_to_tensor(stop, tf.bool))

    def cond(i, stopped):
        return tf.logical_and(i < repeat.n, tf.logical_not(stopped))

    try:
        loop = tf.while_loop(cond, body, [tf.constant(0), tf.constant(False)],
                             parallel_iterations=1, back_prop=False, name='fast_repeat')
    except Exception as e:  # any failure of a custom loss inside a loop: run it plainly
        raise NoLoop('%s: %s' % (type(e).__name__, e)) from e
    if missed:
        raise NoLoop('the loss does not read %s through tf.get_variable' % missed[0])
    return loop


class FastTraining:
    """The while loops of the ``Repeat`` steps of ``steps``, built in the default graph
    after the plain engine's ops (the optimizers' slots exist by then)."""

    def __init__(self, steps, batch):
        self.loops, self.reasons = {}, []
        for step in steps:
            if isinstance(step, Repeat) and id(step) not in self.loops:
                try:
                    self.loops[id(step)] = repeat_loop(step, batch)
                except NoLoop as e:
                    self.reasons.append(str(e))

    def bind(self, sess, phs, plain_train, logger=None):
        """``train(inputs, step)``: a looped ``Repeat`` in one ``sess.run``, anything else
        through ``plain_train``."""
        if self.reasons and logger is not None:
            logger.log('Training loops through the plain engine: %s' % self.reasons[0],
                       'yellow')
        runs = {key: sess.make_callable(loop, feed_list=phs) for key, loop in self.loops.items()}

        def train(inputs, step):
            run = runs.get(id(step))
            if run is None:
                return plain_train(inputs, step)
            n, stopped = run(*inputs)
            return int(n) - 1, bool(stopped)
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

