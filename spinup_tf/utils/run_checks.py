"""The checks a run passes before it writes anything: that the algorithm can act in the env's
spaces, and that the loop's parameters and options make sense together. Each failure is a
``UserInputError`` (one ``error:`` line from the command line, exit 2).

``run.py`` runs the space checks on a probe env before it makes the run folder
(``spinup_tf.algos.check_spaces``); a loop's ``Run`` runs them all again on its first env.
"""
from spinup_tf.utils.envs import observation_shape, check_action_space, check_discrete_or_box
from spinup_tf.utils.errors import UserInputError, check_positive_ints
from spinup_tf.utils.flags import OFF_POLICY_ACTIONS, IMAGE_ALGORITHMS
from spinup_tf.utils.replay_layout import MIN_SLOTS


def check_off_policy_spaces(env, algo):
    """An off-policy algorithm's observation (flat, or images for those that take them) and
    action spaces (``Box``; ``Discrete`` too for DQN and SAC). Returns the observation
    shape."""
    obs = observation_shape(env.observation_space, algo, images=algo in IMAGE_ALGORITHMS)
    check_action_space(env.action_space, algo, OFF_POLICY_ACTIONS.get(algo, ('box',)))
    return obs


def check_stochastic_policy_spaces(env, algo):
    """An on-policy algorithm's spaces: flat or image observations, ``Box`` or
    ``Discrete`` actions."""
    observation_shape(env.observation_space, algo, images=algo in IMAGE_ALGORITHMS)
    check_discrete_or_box(env.action_space, algo)


def check_off_policy_run(env, algo, p, options, hooks):
    """The off-policy loop's checks on its first env: the spaces, the budgets and sizes
    (``p``: the loop's parameters), the options that depend on the env, and what the run's
    ``hooks`` refuse (their ``policy_space`` of the env's action space)."""
    obs = check_off_policy_spaces(env, algo)
    if isinstance(obs, tuple) and options.normalize_obs:
        raise UserInputError('--normalize_obs is for flat observations; images are scaled to '
                             '[0, 1] by the network')
    if options.videos and getattr(env, 'spec', None) is None:
        raise UserInputError('--videos needs an env made by gymnasium.make (it records a '
                             'fresh one with render_mode="rgb_array"); this env_fn\'s env '
                             'has no spec')
    check_positive_ints(steps_per_epoch=p.steps_per_epoch, epochs=p.epochs,
                        batch_size=p.batch_size, replay_size=p.replay_size)
    if p.replay_size < MIN_SLOTS:
        raise UserInputError('replay_size must be at least %d, got %r' % (MIN_SLOTS,
                                                                        p.replay_size))
    if isinstance(p.batch_size, int) and p.batch_size > p.replay_size:
        raise UserInputError('batch_size (%d) is larger than the replay buffer can hold '
                             '(replay_size %d)' % (p.batch_size, p.replay_size))
    hooks.policy_space(env.action_space)


def check_noise_option(algo, act_noise):
    """``--noise`` other than Spinning Up's Gaussian: only for an algorithm that adds
    exploration noise (``act_noise`` not None)."""
    if act_noise is None:
        raise UserInputError('--noise shapes the exploration noise of a deterministic '
                             'policy (ddpg, td3); %s explores %s' % (
                                 algo, 'epsilon-greedily' if algo == 'dqn'
                                 else 'by sampling its own policy'))
