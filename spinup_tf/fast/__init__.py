"""The fast engine: the same algorithm, run with fewer ``sess.run`` calls.

Its equivalence contract, which ``tests/test_fused.py`` checks on fixed batches and fixed
noise, for every algorithm and for 1, 2 and 3 updates per loop iteration, policy delays that
do not divide them and 256-unit layers:

* **Updates** (``window``): a window of ``n`` off-policy updates in one ``sess.run`` leaves
  every variable (networks, targets, optimizer slots) and every diagnostic equal to ``n``
  plain updates (the ``sess.run`` lists of ``spinup_tf.loops.off_policy``) on the same
  batches. It builds the algorithm's own ``train_ops(batch)`` on batches drawn in the
  graph; the order of each variable's reads and writes is that of the separate ``sess.run``
  calls (``hazards``), so results do not depend on thread timing: a seed repeats byte for
  byte.
* **Acting** (``mirrors``): a numpy copy of the policy, derived from the graph's dense
  layers and checked against the graph at start-up (else the graph acts, with a log line),
  gives the graph's actions to float32 rounding.
* **Replay** (``graph_replay_buffer``): the same ring layout as the numpy buffer; batches
  are drawn in the graph, uniform with replacement, from the same transitions.

What differs from the plain engine is only where random numbers come from (the graph's
sampler instead of numpy's), so the two engines give different, equally valid, runs.

This module's :class:`FastEngine` is what ``spinup_tf.loops.off_policy.Run`` uses; the
on-policy one is ``fast.on_policy``.
"""
from spinup_tf.utils.tf1 import tf
from spinup_tf.fast.mirrors import NoMirror, check_mirror, policy_mirror
from spinup_tf.fast.window import NoFastPath, build_window, FusedUpdater, period
from spinup_tf.fast.graph_replay_buffer import GraphReplayBuffer


def unfused(run, update):
    """Why the fast engine cannot run ``update``'s window for ``run`` (its updates then go
    through the plain loop, with a log line), or None when it can."""
    if run.images:
        return 'the graph replay buffer holds flat observations, not images'
    if period(update) is None:
        return 'the update\'s schedule does not repeat within 12 updates'
    return None


class FastEngine:
    """The off-policy fast engine. Build it in the run's graph (before the session starts),
    then call :meth:`start`.

    Args:
        run: the ``off_policy.Run``.
        train_ops: the algorithm's ``train_ops(batch) -> {name: {key: tensor or op}}``.
        update: the algorithm's ``update(j) -> names`` of the lists update ``j`` runs.
        lists: ``train_ops`` built on the placeholders (the shapes of their diagnostics are
            those of the window's).
        batch: the placeholders ``dict(obs1, obs2, acts, rews, done)``.
        act, explore: the acting tensors (see ``Run.train``).

    Every in-graph batch goes through the hooks' ``transform_batch`` (when not None).

    ``replay_buffer`` is the ``GraphReplayBuffer``, or None when the window could not be
    built (then the plain loop runs the updates; ``reason`` says why).
    """

    def __init__(self, run, train_ops, update, lists, batch, act, explore):
        self.logger, self.batch = run.logger, batch
        list_shapes = {name: {k: v.shape.as_list() for k, v in fetches.items()
                              if isinstance(v, tf.Tensor)}
                       for name, fetches in lists.items()}
        self.act, self.explore = act, explore
        self.mirror, self.checks = policy_mirror(batch['obs1'], act, explore, 'main/pi',
                                                 run.policy_space)
        self.replay_buffer = self.window = None
        self.reason = unfused(run, update)
        if self.reason is not None:
            return
        buffer = GraphReplayBuffer(run.obs_dim, run.act_dim, run.p.replay_size,
                                   run.hooks.sample_with_replacement)
        weights = self.mirror.variables if self.mirror is not None else []
        # The loop's windows: gradient_steps updates each, or an episode's length's worth
        sizes = None if run.options.update_at_episode_end else \
            [run.gradient_steps * run.options.updates_per_step]
        try:
            self.window = build_window(buffer, run.p.batch_size, train_ops, update,
                                       list_shapes, weights,
                                       batch_transform=run.hooks.transform_batch,
                                       sizes=sizes)
            self.replay_buffer = buffer
        except NoFastPath as e:
            self.reason = str(e)

    def start(self, sess, act, explore, plain_window):
        """``(act, explore, update_window, on_restore)`` for the loop: the numpy mirror's
        when it matches the graph (else the graph's ``act``/``explore`` given), and the
        fused window (else ``plain_window``)."""
        mirror = self.mirror
        if mirror is not None:
            try:
                mirror.pull(sess)
                for tensor, check in self.checks:
                    if check is not mirror:
                        check.pull(sess)
                    check_mirror(sess, self.batch['obs1'], tensor, check,
                                 int(self.batch['obs1'].shape[-1]))
            except NoMirror as e:
                self.logger.log('Acting through the graph: %s' % e, 'yellow')
                mirror = None
        if self.replay_buffer is None:
            self.logger.log('Updates through the plain engine: %s' % self.reason, 'yellow')
            update_window = plain_window
        else:
            update_window = FusedUpdater(
                sess, self.replay_buffer, self.window, lambda out: self.logger.store(**out),
                on_weights=mirror.set_weights if mirror is not None else None)
        if mirror is None:
            return act, explore, update_window, None
        return (mirror, getattr(mirror, 'sample', None) if self.explore is not None else None,
                update_window, lambda: mirror.pull(sess))
