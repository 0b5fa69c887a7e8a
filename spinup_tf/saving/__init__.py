"""Saving and loading a policy: below the commands (``spinup_tf.tools``), above the
algorithms whose graphs it rebuilds (``spinup_tf.algos``, ``spinup_tf.reproductions``).

``spinup_tf.saving.policy``: a run folder's policy, rebuilt from the project's own code and
the folder's ``config.json``, with only variable *values* read from its ``tf1_save*/``
(see that module for why that is safe to do with a folder from anyone).
"""
