"""Every quirk of the source documents, written once, as the hook behaviour it replaces.

The loops call the hook points of ``spinup_tf.loops.hooks.Hooks`` (Spinning Up's behaviour).
Each quirk here is a small mixin that overrides the points it changes, next to the seed's own
lines; :func:`make_hooks` stacks the mixins of the quirks switched on over ``Hooks``. A quirk
is switched on by its flag (``QUIRK_FLAGS``): a keyword of ``run.py`` (``--update_count_from
1``), of the presets (``spinup_tf.reproductions.presets``) and of ``config.json``, never of a
loop or an algorithm.

From Python::

    from spinup_tf.reproductions.hooks import make_hooks
    td3(env_fn, ..., hooks=make_hooks(update_count_from=1, store_unclipped_actions=True))
"""
from collections import namedtuple

import numpy as np

from spinup_tf.loops.hooks import Hooks
from spinup_tf.loops.noise import NoisyPolicy
from spinup_tf.utils.errors import UserInputError

Flag = namedtuple('Flag', 'default loops help')
"""A quirk flag: its value when off (Spinning Up's behaviour), the loops it applies to
(``'off_policy'``, ``'on_policy'``) and its help line."""

OFF, ON, BOTH = ('off_policy',), ('on_policy',), ('off_policy', 'on_policy')

QUIRK_FLAGS = {
    # off-policy
    'timeout_is_terminal': Flag(False, BOTH, "old gym's done: the env's own time limit is a "
                                             'terminal state (seeds 000, 001 v1, 004)'),
    'start_steps_inclusive': Flag(False, OFF, 'random actions for t <= start_steps, one step '
                                              'more (seeds 000, 001 v1, 003)'),
    'action_range': Flag(None, OFF, 'the policy acts in [-r, r], not the env bounds (seed 003)'),
    'store_unclipped_actions': Flag(False, OFF, 'noisy actions reach env and buffer unclipped '
                                                '(seed 003)'),
    'noise_in_unit_actions': Flag(False, OFF, 'noise scale in [-1, 1] action units (seed 002)'),
    'normalize_rewards': Flag(False, OFF, 'batch reward normalisation (seed 003)'),
    'update_count_from': Flag(0, OFF, 'j of a window\'s first update (1: seed 003)'),
    'sample_without_replacement': Flag(False, OFF, 'batches of distinct transitions '
                                                   '(seed 003)'),
    'adam_epsilon': Flag(1e-8, BOTH, "Adam's epsilon (1e-7: Keras, seed 003)"),
    'noisy_test_episodes': Flag(0, OFF, "episodes of the seed's noisy test mode per epoch, "
                                        'logged as NoisyTestEpRet (seed 003)'),
    'keep_truncated': Flag(True, OFF, 'store the transition that hits the time limit '
                                      '(False: seed 002)'),
    'bootstrap_across_paths': Flag(False, OFF, 'with keep_truncated off, the transition '
                                               "before bootstraps from the next path's first "
                                               'obs (seed 002)'),
    'updates_wait_for_memory': Flag(False, OFF, 'update_after counts stored samples, and no '
                                                'row is written before (seed 002)'),
    'eval_samples': Flag(None, OFF, 'test only after the last epoch, this many episodes '
                                    '(seed 002)'),
    'rllab_logging': Flag(False, OFF, "rllab's extra columns (seed 002)"),
    'cumulative_es_stats': Flag(False, OFF, "rllab's Es* columns over the whole run "
                                            '(seed 002)'),
    'test_at_start': Flag(False, OFF, 'test episodes before training too, as row Epoch 0 '
                                      '(seed 001 v2)'),
    'eval_at_episode_end': Flag(False, OFF, 'evaluate at the first episode end after each '
                                            'steps_per_epoch steps, on the training env, '
                                            'and once after the loop (seed 001 v2)'),
    # on-policy
    'reward_lag': Flag(False, ON, "store the previous step's reward (seed 004)"),
    'bootstrap_with_reward': Flag(False, ON, 'a terminal path is closed with its last reward '
                                             '(seed 004)'),
    'kl_new_old': Flag(False, ON, "TRPO's Gaussian KL as KL(new || old) (seed 004)"),
}


def quirk_flags(loop):
    """``{flag: Flag}`` of the quirks that apply to ``loop`` (``'off_policy'``...)."""
    return {k: f for k, f in QUIRK_FLAGS.items() if loop in f.loops}


# ============================================================================================
# Acting
# ============================================================================================
class ActionRange:
    """Seed 003 line 79 (``action_range = 1.``): the policy acts in ``[-r, r]`` (the tanh
    output scaled by ``r``) whatever the env's bounds, and its random actions are drawn
    there too."""

    def check_env(self, env):
        super().check_env(env)
        from gymnasium.spaces import Box
        if not isinstance(env.action_space, Box):
            raise UserInputError('action_range scales a policy\'s Box actions; this env\'s '
                                 'actions are %s' % (env.action_space,))

    def policy_space(self, action_space):
        from gymnasium.spaces import Box
        r = float(self.flags['action_range'])
        space = Box(-r, r, shape=action_space.shape, dtype=np.float32)
        space.seed(self.p.seed)  # its uniform start actions repeat with the seed
        return space


class StartStepsInclusive:
    """Seeds 000 line 168 and 001 line 352 (``if t > start_steps:`` the policy acts), seed 003
    line 431 (``if frame_idx > explore_steps:``): random actions for ``t <= start_steps``,
    ``start_steps + 1`` of them."""

    def random_action_now(self, t, start_steps):
        return t <= start_steps


class UnclippedOrUnitNoise:
    """Seed 003 lines 235, 432, 443 (``action = self.action_range * action + noise``,
    stored by ``replay_buffer.push`` without a clip): ``store_unclipped_actions`` sends and
    stores the noisy action outside the bounds. Seed 002 (rllab's strategies act on actions
    normalised to ``[-1, 1]``): ``noise_in_unit_actions`` draws the noise on that scale, so
    ``(high - low) / 2`` times larger in env units."""

    def bind(self, p, options, off_policy, config):
        super().bind(p, options, off_policy, config)
        if self.act_noise is None:
            names = [k for k in ('store_unclipped_actions', 'noise_in_unit_actions')
                     if self.flags.get(k)]
            raise UserInputError('%s %s the exploration noise of a deterministic policy '
                                 '(ddpg, td3); this algorithm adds none'
                                 % (' and '.join(names), 'shape' if len(names) > 1 else 'shapes'))

    def explore(self, act, noise, act_low, act_high):
        scale = (act_high - act_low) / 2 if self.flags.get('noise_in_unit_actions') else 1.0
        return NoisyPolicy(act, noise, act_low, act_high, scale=scale,
                           clip=not self.flags.get('store_unclipped_actions'))


# ============================================================================================
# Each step
# ============================================================================================
class TimeoutIsTerminal:
    """Old gym's ``done`` is also true when the env's own ``TimeLimit`` ends the episode.

    Off-policy, seeds 000 line 181 and 001 line 364 (``d = False if ep_len==max_ep_len else
    d``): the transition is stored as terminal unless ``max_ep_len`` was reached at that
    step (Pendulum-v1 stops at 200 and MountainCarContinuous-v0 at 999, before
    ``max_ep_len`` 1000, so their time limit is stored as terminal). On-policy, seed 004
    lines 541, 546 (``terminal = d or (ep_len == max_ep_len)``, ``last_val = r if d else
    V``): a path the env's limit ended is terminal; a ``max_ep_len`` cut still bootstraps.
    """

    def terminal(self, terminated, truncated, ep_len):
        done = terminated or truncated
        if self.off_policy:
            return done and ep_len != self.p.max_ep_len
        return done


class DropTruncated:
    """Seed 002 lines 43, 325-335 (``include_horizon_terminal=False``: the transition that
    reaches ``max_path_length`` is not stored), with ``bootstrap_across_paths`` its lines 343,
    365 (the memory stores observations only, ``ReplayMem.get_batch`` takes ``obss[idx + 1]``
    as the next observation): the transition before the dropped one then reads the next
    path's first observation as its next one, with ``end = 0``."""

    def store(self, replay_buffer, o, a, r, o2, terminal, episode_end):
        if episode_end and not terminal and not self.flags.get('keep_truncated', True):
            replay_buffer.end_episode(keep_stub=not self.flags.get('bootstrap_across_paths'))
            return
        super().store(replay_buffer, o, a, r, o2, terminal, episode_end)


class RewardLag:
    """Seed 004 lines 535-537 (``buf.store(o, a, r, ...)`` before ``o, r, d, _ =
    env.step(a)``): each step stores the previous step's reward, 0 at a path's start."""

    def path_start(self):
        self.previous_reward = 0.0
        super().path_start()

    def stored_reward(self, r):
        stored, self.previous_reward = self.previous_reward, r
        return stored


class BootstrapWithReward:
    """Seed 004 line 546 (``last_val = r if d else ...``): a path that ended in a terminal
    state is closed with its last reward, not 0."""

    def terminal_value(self, r):
        return r


# ============================================================================================
# Updates
# ============================================================================================
class NormalizeRewards:
    """Seed 003 line 309 (``reward = reward_scale * (reward - np.mean(reward)) /
    (np.std(reward) + 1e-6)``): each batch's rewards standardised, in the graph (both
    engines)."""

    @staticmethod
    def transform_batch(batch):
        from spinup_tf.utils.tf1 import tf
        mean, var = tf.nn.moments(batch['rews'], axes=[0])
        return dict(batch, rews=(batch['rews'] - mean) / (tf.sqrt(var) + 1e-6))


class UpdateCountFrom:
    """Seed 003 lines 296, 340 (``self.update_cnt += 1`` before ``if self.update_cnt %
    self.policy_target_update_interval == 0:``): the delayed policy and target updates come
    on the 3rd, 6th, ... update, not the 1st, 4th, ..."""

    def update_index(self, j):
        return j + int(self.flags['update_count_from'])


class SampleWithoutReplacement:
    """Seed 003 line 123 (``random.sample(self.buffer, batch_size)``): a batch holds distinct
    transitions."""

    sample_with_replacement = False


class AdamEpsilon:
    """Seed 003 lines 273-275 (``tf.optimizers.Adam(lr)``: Keras's Adam, epsilon 1e-7, where
    ``tf.train.AdamOptimizer`` has 1e-8; the update rule is the same)."""

    def optimizer(self, learning_rate):
        from spinup_tf.utils.tf1 import tf
        return tf.train.AdamOptimizer(learning_rate=learning_rate,
                                      epsilon=float(self.flags['adam_epsilon']))


class UpdatesWaitForMemory:
    """Seed 002 lines 339, 351-355 (``if memory.size >= self.memory_start_size:`` around the
    updates and around ``self.evaluate(...)``/``logger.dump_tabular``): ``update_after``
    counts the samples stored (with dropped horizon transitions, fewer than the env steps),
    and no progress row is written before the memory holds that many."""

    def store(self, replay_buffer, o, a, r, o2, terminal, episode_end):
        super().store(replay_buffer, o, a, r, o2, terminal, episode_end)
        dropped = episode_end and not terminal and not self.flags.get('keep_truncated', True)
        if not dropped:
            self.state['stored'] = self.state.get('stored', 0) + 1

    def ready_to_update(self, t, replay_buffer):
        return self.state.get('stored', 0) >= self.p.update_after

    def write_row(self, epoch):
        return self.state.get('stored', 0) >= self.p.update_after


class KLNewOld:
    """Seed 004 line 274 (``d_kl = diagonal_guassian_kl(mu, log_std, old_mu_ph,
    old_log_std_ph)``): the Gaussian KL of TRPO's constraint is KL(new || old), where
    Spinning Up's core here gives KL(old || new). (Its categorical KL, line 260, is KL(old ||
    new) as ours, so only Box actions change.)"""

    def actor_critic(self, actor_critic):
        inner = super().actor_critic(actor_critic)

        def reversed_kl(x, a, **kwargs):
            from spinup_tf.algos.distributions import diagonal_gaussian_kl
            pi, logp, logp_pi, info, info_phs, d_kl, v = inner(x, a, **kwargs)
            if 'mu' in info:
                d_kl = diagonal_gaussian_kl(info['mu'], info['log_std'], info_phs['mu'],
                                            info_phs['log_std'])
            return pi, logp, logp_pi, info, info_phs, d_kl, v
        reversed_kl.__name__ = getattr(inner, '__name__', 'actor_critic')
        return reversed_kl


# ============================================================================================
# Epochs, tests and logging
# ============================================================================================
class TestAtStart:
    """Seed 001 line 1535 (``evaluations = [evaluate_policy(policy)]``): the untrained policy
    is evaluated before training, as row Epoch 0."""

    def before_training(self, loop):
        super().before_training(loop)
        loop.end_epoch(0, 0, last=False)


class EvalAtEpisodeEnd:
    """Seed 001 lines 1474-1482, 1560-1574, 1615-1618: evaluation happens at the first episode
    end once ``timesteps_since_eval >= eval_freq`` (the remainder kept: ``%= eval_freq``),
    on the training env itself (``evaluate_policy`` resets ``env``; training then resets it
    again), and once more after the loop. An epoch here is the stretch between two such
    evaluations, so rows come at episode ends and the last one after the final step."""

    def epoch_due(self, t, episode_ended):
        since = self.state.get('since_eval', 0) + 1
        self.state['since_eval'] = since
        if episode_ended and since >= self.p.steps_per_epoch and \
                t + 1 < self.p.steps_per_epoch * self.p.epochs:
            self.state['since_eval'] = since % self.p.steps_per_epoch
            return True
        return False

    def final_epoch_due(self):
        return True

    def test_on(self, loop):
        return loop.env, None  # the training env, its RNG continued

    def after_tests(self, loop, epoch):
        super().after_tests(loop, epoch)
        loop.restart_episode()  # the training episode starts after the evaluation's resets


class EvalSamples:
    """Seed 002 lines 29, 443-455 (``if epoch == self.n_epochs - 1:`` ...
    ``sample_rewards(..., eval_samples=self.eval_samples, ...)``): test episodes only after
    the last epoch, ``eval_samples`` of them (one rollout per sample); the other rows have
    NaN test columns."""

    def test_episodes(self, epoch, last, n):
        return int(self.flags['eval_samples']) if last else 0


class RllabLogging:
    """Seed 002 lines 457-511 (``evaluate``): rllab's columns (``spinup_tf.reproductions.
    rllab_logging``), with ``cumulative_es_stats`` lines 103, 309, 495-511
    (``self.strategy_path_returns`` is appended to and never cleared)."""

    @property
    def test_discount(self):
        return self.gamma

    def after_tests(self, loop, epoch):
        from spinup_tf.reproductions import rllab_logging
        super().after_tests(loop, epoch)
        logger = loop.logger
        self.q_fit = rllab_logging.q_fit_stats(logger)  # before the algorithm's columns
        self.es_returns = None
        if self.flags.get('cumulative_es_stats'):
            returns = self.state.setdefault('es_returns', [])
            returns.extend(float(r) for r in logger.epoch_dict.get('EpRet', []))
            self.es_returns = returns

    def log_extra(self, logger, loop):
        from spinup_tf.reproductions import rllab_logging
        super().log_extra(logger, loop)
        rllab_logging.log_rllab_columns(logger, self.q_fit, self.es_returns)


class NoisyTestEpisodes:
    """Seed 003 lines 467-503 (``--test``: ``get_action(state, explore_noise_scale=1.0)``,
    300 frames of 150-step episodes): the seed never tests a deterministic policy. Its own
    metric is reported beside ours: after the deterministic test episodes, this many
    episodes of the policy plus N(0, ``act_noise``) noise (clipped to the bounds only
    without ``store_unclipped_actions``), logged as ``NoisyTestEpRet``. They draw from their
    own RNG and leave the test env's as it was, so training and the deterministic tests are
    unchanged."""

    def after_tests(self, loop, epoch):
        super().after_tests(loop, epoch)
        n = int(self.flags['noisy_test_episodes'])
        env, rng = loop.test_env, self.noise_rng(loop)
        env_rng = env.unwrapped.np_random.bit_generator.state
        clip = not self.flags.get('store_unclipped_actions')
        low, high = loop.env.action_space.low, loop.env.action_space.high
        for _ in range(n):
            o, _ = env.reset()
            ep_ret, ep_len, done = 0.0, 0, False
            while not done:
                a = loop.agent.act(o) + self.act_noise * rng.standard_normal(low.shape)
                o, r, terminated, truncated, _ = env.step(np.clip(a, low, high) if clip else a)
                ep_ret, ep_len = ep_ret + r, ep_len + 1
                done = terminated or truncated or ep_len == self.p.max_ep_len
            loop.logger.store(NoisyTestEpRet=ep_ret)
        env.unwrapped.np_random.bit_generator.state = env_rng
        self.state['noise_rng'] = rng.bit_generator.state

    def noise_rng(self, loop):
        rng = np.random.default_rng(self.p.seed + 30000)
        if self.state.get('noise_rng'):
            rng.bit_generator.state = self.state['noise_rng']
        return rng

    def log_extra(self, logger, loop):
        super().log_extra(logger, loop)
        logger.log_tabular('NoisyTestEpRet', with_min_and_max=True)


# ============================================================================================
# Making the hooks
# ============================================================================================
MIXINS = [  # (flag, when it is on, mixin); stacked in this order over Hooks
    ('noisy_test_episodes', lambda v: bool(v), NoisyTestEpisodes),
    ('rllab_logging', lambda v: bool(v), RllabLogging),
    ('eval_samples', lambda v: v is not None, EvalSamples),
    ('eval_at_episode_end', lambda v: bool(v), EvalAtEpisodeEnd),
    ('test_at_start', lambda v: bool(v), TestAtStart),
    ('kl_new_old', lambda v: bool(v), KLNewOld),
    ('updates_wait_for_memory', lambda v: bool(v), UpdatesWaitForMemory),
    ('adam_epsilon', lambda v: v != 1e-8, AdamEpsilon),
    ('sample_without_replacement', lambda v: bool(v), SampleWithoutReplacement),
    ('update_count_from', lambda v: bool(v), UpdateCountFrom),
    ('normalize_rewards', lambda v: bool(v), NormalizeRewards),
    ('bootstrap_with_reward', lambda v: bool(v), BootstrapWithReward),
    ('reward_lag', lambda v: bool(v), RewardLag),
    ('keep_truncated', lambda v: not v, DropTruncated),
    ('timeout_is_terminal', lambda v: bool(v), TimeoutIsTerminal),
    ('store_unclipped_actions', lambda v: bool(v), UnclippedOrUnitNoise),
    ('noise_in_unit_actions', lambda v: bool(v), UnclippedOrUnitNoise),
    ('start_steps_inclusive', lambda v: bool(v), StartStepsInclusive),
    ('action_range', lambda v: v is not None, ActionRange),
]


def make_hooks(**flags):
    """The hooks of the quirks ``flags`` switch on (``QUIRK_FLAGS`` names; a flag at its
    default is off), over Spinning Up's ``Hooks``: an instance of a class made of their
    mixins, with ``flags`` the non-default ones (what ``config.json`` records)."""
    unknown = sorted(set(flags) - set(QUIRK_FLAGS))
    if unknown:
        raise UserInputError('unknown quirk flags %s; known: %s'
                             % (unknown, ', '.join(QUIRK_FLAGS)))
    set_flags = {k: v for k, v in flags.items() if v != QUIRK_FLAGS[k].default}
    if set_flags.get('bootstrap_across_paths') and set_flags.get('keep_truncated', True):
        raise UserInputError('bootstrap_across_paths needs keep_truncated False')
    bases = []
    for flag, on, mixin in MIXINS:
        if flag in set_flags and on(set_flags[flag]) and mixin not in bases:
            bases.append(mixin)
    cls = type('QuirkHooks', tuple(bases) + (Hooks,), {})
    return cls(**set_flags)
