"""The named moments of the loops where a run may behave differently from Spinning Up.

Both loops (``spinup_tf.loops.off_policy``, ``spinup_tf.loops.on_policy``) call hook points
at fixed places; :class:`Hooks` gives each point the off-policy loop calls, and those both
loops share (their epoch ends), this project's behaviour, which is Spinning Up's except where
the table says otherwise (and ``docs/user-guide/training.md`` lists why). The on-policy
loop's own points are in ``spinup_tf.loops.on_policy_hooks``. A source document that did
something else (``spinup_tf.reproductions``) overrides a few of them, as do the flags that
restore Spinning Up's own behaviour (``--spinning_up_start_steps``, ``--spinning_up_cg``,
``--adv_epsilon 0``); nothing in a loop names a document or reads a quirk flag.

=====================  ===========================================  ======================
hook                   when the loop calls it                       the default
=====================  ===========================================  ======================
``policy_space``       once, on the first env, before any write     the env's action space
                       (a setting it cannot apply to raises)
``random_action_now``  each off-policy step: random or policy?      ``t < start_steps``
                                                                    (Spinning Up: ``not t
                                                                    > start_steps``, one
                                                                    step more)
``explore``            once: the noisy training policy              clipped ``mu + noise``
``terminal``           each step: is this a terminal state?         ``terminated``
``store``              each off-policy step: into the buffer        store ``d = terminal``
``ready_to_update``    each off-policy step: updates may start?     ``t >= update_after``
``update_schedule``    once: the algorithm's ``update(j)``          unchanged
``transform_batch``    once, in the graph: every update's batch     unchanged
``optimizer``          once per optimizer the algorithm builds      ``AdamOptimizer(lr)``
``before_training``    once, before the first step                  nothing
``epoch_due``          each off-policy step: does an epoch end?     every steps_per_epoch
``after_last_step``    after the last step, if no epoch ended as    model and checkpoint
                       the run's last                               saved, no row
``test_episodes``      each epoch end: how many test episodes       ``num_test_episodes``
``test_on``            each epoch end: the env that tests           the test env
``after_tests``        each epoch end, after the test episodes      nothing
``write_row``          each epoch end: its progress row             the row, with
                                                                    ``TotalEnvInteracts``
                                                                    the steps taken
``log_extra``          each row, after the algorithm's columns      nothing
=====================  ===========================================  ======================

A hook object carries ``flags``, the settings that chose its behaviour (recorded in
``config.json``), and ``state``, a JSON-able dict the loop checkpoints with its own, so a
resumed run continues a stateful hook where it was.
"""

class Hooks:
    """Spinning Up's behaviour at every hook point (see the module's table).

    Attributes:
        flags (dict): the settings that made these hooks (``{}``: Spinning Up's).
        state (dict): what the hooks keep between calls (checkpointed with the loop).
        p, options, config: the loop's parameters (``steps_per_epoch``, ``epochs``,
            ``max_ep_len``, ...), its options and the run's whole config (``gamma``,
            ``act_noise``...), set by :meth:`bind`; ``off_policy`` says which loop calls.
    """

    def __init__(self, **flags):
        self.flags = dict(flags)
        self.state = {}
        self.p, self.options, self.config, self.off_policy = None, None, None, True

    def bind(self, p, options, off_policy, config):
        """Called by a loop's ``Run`` before anything else: its parameters, options and
        config (the algorithm's hyperparameters with the options)."""
        self.p, self.options, self.off_policy, self.config = p, options, off_policy, config

    # ---- acting -------------------------------------------------------------------------
    def policy_space(self, action_space):
        """The ``Box`` a deterministic policy's tanh output is mapped onto (and its random
        actions drawn from). Also called with the first env's space before anything is
        written: a setting that cannot apply to it raises ``UserInputError``."""
        return action_space

    def random_action_now(self, t, start_steps):
        """Whether off-policy step ``t`` (0-based) acts uniformly at random: for the first
        ``start_steps`` steps. (Spinning Up's TF1 and PyTorch loops test ``if t >
        start_steps:`` before using the policy, so they take ``start_steps + 1`` random
        actions; ``--spinning_up_start_steps True`` does the same.)"""
        return t < start_steps

    def explore(self, policy):
        """The training-time policy of a deterministic actor, given the loop's ``policy``
        (``spinup_tf.loops.off_policy.NoisyPolicy``: ``clip(act(o) + noise)``)."""
        return policy

    # ---- each step ------------------------------------------------------------------------
    def terminal(self, terminated, truncated, ep_len):
        """Whether the step ended in a terminal state (its target does not bootstrap).

        Args:
            terminated, truncated: the env's flags (``truncated``: its own time limit;
                ``max_ep_len`` is not counted in).
            ep_len: the episode's length after this step.
        """
        return terminated

    def store(self, replay_buffer, o, a, r, o2, terminal, episode_end):
        """Put one off-policy transition into ``replay_buffer``: ``d`` is ``terminal``;
        ``episode_end`` (terminated, truncated or ``max_ep_len``) starts a new episode."""
        replay_buffer.store(o, a, r, o2, float(terminal), episode_end=episode_end)

    # ---- updates ----------------------------------------------------------------------
    def ready_to_update(self, t, replay_buffer):
        """Whether off-policy updates may run after step ``t``: ``t >= update_after``
        (Spinning Up's), or, for updates at episode ends, once the buffer holds
        ``update_after`` transitions."""
        if self.options.update_at_episode_end:
            return replay_buffer.size >= self.p.update_after
        return t >= self.p.update_after

    def update_schedule(self, update):
        """The off-policy algorithm's ``update(j) -> names`` as the loop runs it (``j``
        counts the updates of a round from 0)."""
        return update

    transform_batch = None
    """None, or ``f(batch) -> batch`` applied in the graph to every update's batch."""

    sample_with_replacement = True
    """How the replay buffers draw a batch: uniformly with replacement (Spinning Up's), or
    without replacement within a batch."""

    def optimizer(self, learning_rate):
        """The optimizer of an algorithm's train step: Spinning Up's
        ``tf.train.AdamOptimizer(learning_rate=lr)``."""
        from spinup_tf.utils.tf1 import tf
        return tf.train.AdamOptimizer(learning_rate=learning_rate)

    # ---- epochs -------------------------------------------------------------------------
    def before_training(self, loop):
        """Called once before a fresh run's first step."""

    def epoch_due(self, t, episode_ended):
        """Whether an epoch ends after step ``t`` (0-based, over the whole run)."""
        return (t + 1) % self.p.steps_per_epoch == 0

    def after_last_step(self, loop):
        """Called when the run's steps are done and no epoch has ended as its last (with
        Spinning Up's epochs, the last step always ends the last epoch): the model and a
        checkpoint of the finished run are saved, with no row (``EpochLoop.end_without_row``),
        so a resume has nothing left to run. A seed that evaluates once more after its loop
        writes that epoch here."""
        loop.end_without_row()

    def test_episodes(self, epoch, last, n):
        """How many deterministic test episodes the epoch runs (``n``: the run's
        ``num_test_episodes``; ``last``: the run's last epoch)."""
        return n

    def test_on(self, loop):
        """``(env, seed)``: the env the test episodes run on, and the seed of its first
        reset (None: continue its RNG)."""
        return loop.test_env, loop.p.seed

    def after_tests(self, loop, epoch):
        """Called after the epoch's test episodes, before its row."""

    def write_row(self, loop, epoch, total_steps):
        """Write epoch ``epoch``'s progress row, after ``total_steps`` env steps
        (``EpochLoop.log_row``: its ``TotalEnvInteracts``). A seed may write none, or log
        other steps."""
        loop.log_row(epoch, total_steps)

    def log_extra(self, logger, loop):
        """Log extra columns after the algorithm's, before ``Time``."""
