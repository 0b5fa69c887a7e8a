"""Seed quirks that act on an algorithm's data rather than on its maths, switched on by the
loop options of ``spinup_tf.loops.off_policy`` (``OPTIONS``) that the presets set."""
from spinup_tf.utils.tf1 import tf


def normalized_rewards(batch):
    """The TensorLayer tutorial's batch reward normalisation (seed 003): the ``(batch,)``
    rewards of each batch become ``(r - mean) / (std + 1e-6)``; the rest of ``batch`` is
    unchanged. Applied in the graph by both engines."""
    mean, var = tf.nn.moments(batch['rews'], axes=[0])
    return dict(batch, rews=(batch['rews'] - mean) / (tf.sqrt(var) + 1e-6))
