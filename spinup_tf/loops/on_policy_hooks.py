"""The hook points only the on-policy loop (VPG, PPO, TRPO, NPG) calls, over the ones both
loops share (``spinup_tf.loops.hooks``).

=====================  ===========================================  ======================
hook                   when the loop calls it                       the default
=====================  ===========================================  ======================
``path_start``         a trajectory starts                          nothing
``stored_reward``      each step: the reward stored                 the step's reward
``terminal_value``     a terminal path: its last value              0
``actor_critic``       once: wraps the actor-critic                 unchanged
``epoch_update``       once: wraps the update of an epoch           unchanged (TRPO's CG:
                                                                    float64 with an early
                                                                    exit; Spinning Up's:
                                                                    float32, no exit)
``advantage_epsilon``  once: the buffer's normalisation             ``EPS`` added to the
                                                                    std (Spinning Up: 0)
=====================  ===========================================  ======================

The quirks of ``spinup_tf.reproductions.hooks`` stack over :class:`OnPolicyHooks`, so one
hooks object serves either loop.
"""
from spinup_tf.loops.hooks import Hooks


class OnPolicyHooks(Hooks):
    """Spinning Up's behaviour at every hook point of the on-policy loop (this module's
    table, and the shared ones of :class:`spinup_tf.loops.hooks.Hooks`)."""

    def path_start(self):
        """Called when the loop starts (or resumes) and after each trajectory it closes."""

    def stored_reward(self, r):
        """The reward a step stores."""
        return r

    def terminal_value(self, r):
        """The value a path that ended in a terminal state is closed with (``r``: its last
        reward)."""
        return 0.0

    def actor_critic(self, actor_critic):
        """The actor-critic the graph is built with."""
        return actor_critic

    def epoch_update(self, update):
        """The algorithm's ``update(sess_run, train)`` of an epoch, as run."""
        return update

    advantage_epsilon = 1e-8  # spinup_tf.utils.tf1.EPS (not imported: no TensorFlow here)
    """Added to the advantages' std when the buffer normalises them (Spinning Up's TF1
    buffers add nothing)."""
