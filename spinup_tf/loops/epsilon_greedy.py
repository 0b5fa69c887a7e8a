"""DQN's two additions to the off-policy loop: epsilon-greedy exploration, and a target
network that follows the main one every so many env steps.

``Run.train(..., epsilon=..., target_update=...)`` runs this loop instead of
:class:`~spinup_tf.loops.off_policy.OffPolicyLoop`; everything else (the steps, the replay
buffer, the update schedule, the epochs) is that loop's.
"""
import numpy as np

from spinup_tf.loops.off_policy import OffPolicyLoop


class EpsilonGreedyLoop(OffPolicyLoop):
    """The off-policy loop with epsilon-greedy actions and a periodic target update.

    Args:
        run, agent, replay_buffer: as :class:`OffPolicyLoop`.
        epsilon: ``epsilon(t)``: after ``start_steps``, step ``t`` takes a uniform-random
            action with this probability (drawn from numpy's global RNG, which checkpoints
            keep), else the greedy one.
        target_update: ``(op, interval)``, or None: ``op`` runs every ``interval`` env
            steps once updates have started, after that step's updates.
        sess: the session that runs ``op``.
    """

    def __init__(self, run, agent, replay_buffer, epsilon, target_update, sess):
        super().__init__(run, agent, replay_buffer)
        self.epsilon = epsilon
        self.target_update = None
        if target_update is not None:
            op, self.target_interval = target_update
            self.target_update = sess.make_callable(op)

    def acts_at_random(self, t):
        return super().acts_at_random(t) or np.random.random_sample() < self.epsilon(t)

    def after_updates(self, t):
        # The target network follows the main one every target_update_interval steps
        if self.target_update is not None and t % self.target_interval == 0 \
                and self.hooks.ready_to_update(t, self.replay_buffer):
            self.target_update()

    def log_columns(self):
        self.logger.log_tabular('Epsilon', self.epsilon(self.state['t']))
