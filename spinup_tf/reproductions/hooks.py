"""Every quirk of the source documents, written once, as the hook behaviour it replaces.

The loops call the hook points of ``spinup_tf.loops.hooks.Hooks`` and
``spinup_tf.loops.on_policy_hooks.OnPolicyHooks`` (this project's behaviour, Spinning Up's but
for the few differences they list). Three flags here restore Spinning Up's own behaviour
where this project's default differs (``spinning_up_start_steps``, ``spinning_up_cg``,
``adv_epsilon 0``): the seeds that copy Spinning Up's code set them too. Each quirk here is a
small mixin that overrides the points it changes, next to the seed's own lines;
:func:`make_hooks` stacks the mixins of the quirks switched on over ``OnPolicyHooks`` (a
``Hooks`` too, so one object serves either loop). A quirk is switched on by its flag
(``QUIRK_FLAGS``): a keyword of ``run.py`` (``--update_count_from 1``), of the presets
(``spinup_tf.reproductions.presets``) and of ``config.json``, never of a loop or an
algorithm.

From Python::

    from spinup_tf.reproductions.hooks import make_hooks
    td3(env_fn, ..., hooks=make_hooks(update_count_from=1, store_unclipped_actions=True))
"""
from collections import namedtuple

import numpy as np

from spinup_tf.loops.on_policy_hooks import OnPolicyHooks
from spinup_tf.utils.errors import UserInputError

Flag = namedtuple('Flag', 'default loops help')
"""A quirk flag: its value when off (Spinning Up's behaviour), the loops it applies to
(``'off_policy'``, ``'on_policy'``) and its help line."""

OFF, ON, BOTH = ('off_policy',), ('on_policy',), ('off_policy', 'on_policy')

QUIRK_FLAGS = {
    # off-policy
    'timeout_is_terminal': Flag(False, BOTH, "old gym's done: the env's own time limit is a "
                                             'terminal state (seeds 000, 001 v1, 004)'),
    'spinning_up_start_steps': Flag(False, OFF, "Spinning Up's own test, `if t > start_steps:` "
                                                'the policy acts: start_steps + 1 random actions '
                                                '(Spinning Up TF1/PyTorch; seeds 000, 001 v1, '
                                                '003)'),
    'epochs_one_step_late': Flag(False, OFF, 'an epoch ends after step t > 0 with t % '
                                             'steps_per_epoch == 0 (0-based), logging '
                                             'TotalEnvInteracts t; the last partial epoch '
                                             "is not logged (seed 000: Spinning Up's early "
                                             'ddpg.py)'),
    'action_range': Flag(None, OFF, 'the policy acts in [-r, r], not the env bounds (seed 003)'),
    'store_unclipped_actions': Flag(False, OFF, 'noisy actions reach env and buffer unclipped '
                                                '(seed 003)'),
    'noise_in_unit_actions': Flag(False, OFF, 'noise scale in [-1, 1] action units (seed 002)'),
    'normalize_rewards': Flag(False, OFF, 'batch reward normalisation (seed 003)'),
    'update_count_from': Flag(0, OFF, 'j of a window\'s first update (1: seed 003)'),
    'sample_without_replacement': Flag(False, OFF, 'batches of distinct transitions '
                                                   '(seed 003)'),
    'adam_epsilon': Flag(1e-8, BOTH, "Adam's epsilon (1e-7: Keras, seed 003)"),
    'torch_adam': Flag(False, BOTH, "torch.optim.Adam's update: epsilon added to sqrt(v) "
                                    'after the bias correction (seed 001 v2)'),
    'noisy_test_episodes': Flag(0, OFF, "episodes of the seed's noisy test mode per epoch, "
                                        'logged as NoisyTestEpRet (seed 003)'),
    'keep_truncated': Flag(True, OFF, 'store the transition that hits the time limit '
                                      '(False: seed 002)'),
    'bootstrap_across_paths': Flag(False, OFF, 'with keep_truncated off, the transition '
                                               "before bootstraps from the next path's first "
                                               'obs (seed 002)'),
    'updates_wait_for_memory': Flag(False, OFF, 'update_after counts stored samples, and no '
                                                'row is written before (seed 002)'),
    'hold_back_newest': Flag(False, OFF, 'a sample enters the replay buffer when the next one '
                                         'is stored: the newest is never sampled (seed 002)'),
    'eval_samples': Flag(None, OFF, 'test only after the last epoch, this many episodes, '
                                    'on the training env (seed 002)'),
    'rllab_logging': Flag(False, OFF, "rllab's extra columns (seed 002)"),
    'cumulative_es_stats': Flag(False, OFF, "rllab's Es* columns over the whole run "
                                            '(seed 002)'),
    'test_at_start': Flag(False, OFF, 'test episodes before training too, as row Epoch 0 '
                                      '(seed 001 v2)'),
    'eval_at_episode_end': Flag(False, OFF, 'evaluate at the first episode end after each '
                                            'steps_per_epoch steps, on the training env, '
                                            'and once after the loop (seed 001 v2)'),
    'no_final_burst': Flag(False, OFF, 'no training burst after the last step, even when it '
                                       'ends an episode (seed 001 v2)'),
    # on-policy
    'reward_lag': Flag(False, ON, "store the previous step's reward (seed 004)"),
    'bootstrap_with_reward': Flag(False, ON, 'a terminal path is closed with its last reward '
                                             '(seed 004)'),
    'kl_new_old': Flag(False, ON, "TRPO's Gaussian KL as KL(new || old) (seed 004)"),
    'spinning_up_cg': Flag(False, ON, "Spinning Up's own conjugate gradient: float32, every "
                                      'cg_iters iteration, no early exit (Spinning Up TF1; '
                                      'seed 004)'),
    'adv_epsilon': Flag(1e-8, ON, "added to the advantages' std when they are normalised "
                                  "(0: Spinning Up TF1's buffers; seed 004)"),
}

RENAMED_FLAGS = {
    'start_steps_inclusive': 'spinning_up_start_steps',  # until 2026-12-06
}
"""Old flag names -> today's: a ``config.json`` (or a command) with the old name still
works."""


def quirk_flags(loop):
    """``{flag: Flag}`` of the quirks that apply to ``loop`` (``'off_policy'``...), old
    names (``RENAMED_FLAGS``) last."""
    flags = {k: f for k, f in QUIRK_FLAGS.items() if loop in f.loops}
    for old, new in RENAMED_FLAGS.items():
        if new in flags:
            flags[old] = flags[new]._replace(help='old name of --%s' % new)
    return flags


def renamed(flags):
    """``flags`` (a dict: quirk flags, or a whole ``config.json``) with old flag names
    (``RENAMED_FLAGS``) under today's; ``UserInputError`` when both name different
    values."""
    out = dict(flags)
    for old, new in RENAMED_FLAGS.items():
        if old in out:
            value = out.pop(old)
            if new in out and out[new] != value:
                raise UserInputError('--%s (%r) and its old name --%s (%r) differ'
                                     % (new, out[new], old, value))
            out[new] = value
    return out


# ============================================================================================
# Acting
# ============================================================================================
class ActionRange:
    """Seed 003 line 79 (``action_range = 1.``): the policy acts in ``[-r, r]`` (the tanh
    output scaled by ``r``) whatever the env's bounds, and its random actions are drawn
    there too."""

    def policy_space(self, action_space):
        from gymnasium.spaces import Box
        if not isinstance(action_space, Box):
            raise UserInputError('action_range scales a policy\'s Box actions; this env\'s '
                                 'actions are %s' % (action_space,))
        r = float(self.flags['action_range'])
        space = Box(-r, r, shape=action_space.shape, dtype=np.float32)
        space.seed(self.p.seed)  # its uniform start actions repeat with the seed
        return space


class SpinningUpStartSteps:
    """Spinning Up's own test, not a seed's slip: its TF1 and PyTorch loops (``ddpg.py``,
    ``td3.py``, ``sac.py``) act with the policy ``if t > start_steps:``, so they take random
    actions for ``t <= start_steps``, ``start_steps + 1`` of them, as do the seeds that copy
    them (000 line 168, 001 line 352) and seed 003 line 431 (``if frame_idx >
    explore_steps:``). This project's default takes ``start_steps``
    (``docs/user-guide/training.md``)."""

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
        if self.config.get('act_noise') is None:
            names = [k for k in ('store_unclipped_actions', 'noise_in_unit_actions')
                     if self.flags.get(k)]
            raise UserInputError('%s %s the exploration noise of a deterministic policy '
                                 '(ddpg, td3); this algorithm adds none'
                                 % (' and '.join(names), 'shape' if len(names) > 1 else 'shapes'))

    def explore(self, policy):
        policy = super().explore(policy)
        scale = (policy.act_high - policy.act_low) / 2 \
            if self.flags.get('noise_in_unit_actions') else 1.0
        return _ScaledNoise(policy, scale, clip=not self.flags.get('store_unclipped_actions'))


class _ScaledNoise:
    """A ``NoisyPolicy`` whose noise is multiplied by ``scale`` (a number or ``(act_dim,)``)
    and whose action is clipped to the bounds only with ``clip``; its noise process
    (``noise``, ``reset``) is the policy's."""

    def __init__(self, policy, scale, clip):
        self.policy, self.scale, self.clip = policy, scale, clip
        self.noise, self.reset = policy.noise, policy.reset
        self.act_low, self.act_high = policy.act_low, policy.act_high

    def __call__(self, o):
        noise = self.policy.draw()
        a = self.policy.act(o) + self.scale * noise
        return np.clip(a, self.act_low, self.act_high) if self.clip else a


# ============================================================================================
# Each step
# ============================================================================================
class HoldBackNewest:
    """Seed 002's memory, the MXNet example's ``ReplayMem`` (``memory.add_sample(obs, act,
    rwd, end)``, lines 331, 335; ``get_batch`` draws ``idx`` in ``[0, size)`` but never
    ``idx == self.top``, the newest sample, and takes ``obss[idx + 1]`` as its next
    observation): a sample is sampled only once the next one is stored, whose observation is
    its next one. So each sample is held back here and put into the replay buffer when the
    next arrives, with that sample's observation as its next (the same within a path; after
    a dropped horizon transition, with ``bootstrap_across_paths``, the next path's first).
    The held sample is in ``state`` (checkpointed)."""

    def store(self, replay_buffer, o, a, r, o2, terminal, episode_end):
        super().store(_HeldBackMemory(replay_buffer, self.state), o, a, r, o2, terminal,
                      episode_end)


class _HeldBackMemory:
    """What the hooks' ``store`` sees of the replay buffer under ``HoldBackNewest``: its
    ``store`` and ``end_episode``, one sample late."""

    def __init__(self, buffer, state):
        self.buffer, self.state = buffer, state

    def _flush(self, next_obs=None):
        held = self.state.pop('held', None)
        if held is None:
            return
        o2 = held['o2'] if next_obs is None or held['episode_end'] else next_obs
        self.buffer.store(np.asarray(held['o'], np.float32), np.asarray(held['a'], np.float32),
                          held['r'], np.asarray(o2, np.float32), held['d'],
                          episode_end=held['episode_end'])

    def store(self, obs, act, rew, next_obs, done, episode_end=False):
        self._flush(next_obs=obs)
        self.state['held'] = dict(o=np.asarray(obs, np.float32).tolist(),
                                  a=np.asarray(act, np.float32).tolist(), r=float(rew),
                                  o2=np.asarray(next_obs, np.float32).tolist(),
                                  d=float(done), episode_end=bool(episode_end))

    def end_episode(self, keep_stub=True):
        """A horizon transition dropped: with ``keep_stub`` the held sample ends its path
        (stored now, its own next observation in the stub); without, it waits for the next
        path's first observation."""
        if keep_stub:
            held = self.state.get('held')
            if held is not None:
                held['episode_end'] = True
            self._flush()


class TimeoutIsTerminal:
    """Old gym's ``done`` is also true when the env's own ``TimeLimit`` ends the episode.

    Off-policy, seeds 000 line 181 and 001 line 364 (``d = False if ep_len==max_ep_len else
    d``): the transition is stored as terminal unless ``max_ep_len`` was reached at that
    step (Pendulum-v1 stops at 200 and MountainCarContinuous-v0 at 999, before
    ``max_ep_len`` 1000, so their time limit is stored as terminal). On-policy, seed 004
    lines 541, 546 (``terminal = d or (ep_len == max_ep_len)``, ``last_val = r if d else
    sess.run(v, ...)``): a path the env's limit ended is terminal; a ``max_ep_len`` cut
    still bootstraps.
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
    """Seed 003 lines 308-310 (``reward = reward_scale * (reward - np.mean(reward, axis=0)) /
    (np.std(reward, axis=0) + 1e-6)``, called with ``reward_scale=1.``, line 453): each
    batch's rewards standardised, in the graph (both engines)."""

    @staticmethod
    def transform_batch(batch):
        from spinup_tf.utils.tf1 import tf
        mean, var = tf.nn.moments(batch['rews'], axes=[0])
        return dict(batch, rews=(batch['rews'] - mean) / (tf.sqrt(var) + 1e-6))


class UpdateCountFrom:
    """Seed 003 lines 296, 340 (``self.update_cnt += 1`` before ``if self.update_cnt %
    self.policy_target_update_interval == 0:``): the delayed policy and target updates come
    on the 3rd, 6th, ... update, not the 1st, 4th, ..."""

    def update_schedule(self, update):
        offset = int(self.flags['update_count_from'])
        return lambda j: update(j + offset)


class SampleWithoutReplacement:
    """Seed 003 line 123 (``random.sample(self.buffer, batch_size)``): a batch holds distinct
    transitions."""

    sample_with_replacement = False


class AdamEpsilon:
    """Seed 003 lines 273-275 (``tf.optimizers.Adam(q_lr)``, ``tf.optimizers.Adam(policy_lr)``):
    Keras's Adam, epsilon 1e-7, where tf.train.AdamOptimizer has 1e-8; the update rule is
    the same."""

    def optimizer(self, learning_rate):
        from spinup_tf.utils.tf1 import tf
        return tf.train.AdamOptimizer(learning_rate=learning_rate,
                                      epsilon=float(self.flags['adam_epsilon']))


class TorchAdam:
    """Seed 001 v2 lines 1386, 1390 (``torch.optim.Adam(self.actor.parameters())``, and the
    critic's): torch's Adam adds epsilon to ``sqrt(v)`` after the bias correction,
    ``tf.train.AdamOptimizer`` before it (``spinup_tf.reproductions.torch_adam``). Its
    defaults, lr 1e-3 and eps 1e-8, are the preset's and TF's."""

    def optimizer(self, learning_rate):
        from spinup_tf.reproductions.torch_adam import TorchAdamOptimizer
        return TorchAdamOptimizer(learning_rate=learning_rate,
                                  epsilon=float(self.flags.get('adam_epsilon', 1e-8)))


class NoFinalBurst:
    """Seed 001 v2 lines 1560-1569: an episode's training burst runs at the top of the next
    iteration of ``while total_timesteps < max_timesteps:`` (``if done: ... if
    total_timesteps != 0: policy.train(replay_buffer, episode_timesteps, ...)``), so no burst
    follows the run's last step, even when that step ends an episode; the loop here trains
    at the episode's end, right after the step."""

    def ready_to_update(self, t, replay_buffer):
        if self.options.update_at_episode_end and \
                t + 1 == self.p.steps_per_epoch * self.p.epochs:
            return False
        return super().ready_to_update(t, replay_buffer)


class SpinningUpCG:
    """Spinning Up's TF1 ``trpo.py``, as seed 004 copies it (lines 233-236, 473-497): its
    ``cg`` runs all ``cg_iters`` iterations (no early exit) on float32 vectors (``x_sum``,
    Spinning Up's ``mpi_avg``, casts ``g`` and every ``Hx`` to float32), with the damping
    added to ``Hx`` in float32 (``hvp += damping_coeff * v_ph``, line 464). This project's
    solver works in float64 and stops once the residual is tiny
    (``spinup_tf.algos.natural_gradient``)."""

    def epoch_update(self, update):
        inner = super().epoch_update(update)

        def spinning_up_cg_update(sess_run, train):
            from spinup_tf.algos import natural_gradient as ng
            with ng.solver_numerics(**ng.SPINNING_UP_CG):
                return inner(sess_run, train)
        return spinning_up_cg_update


class AdvEpsilon:
    """Seed 004 lines 238-243, 357-358 (``adv_mean, adv_std = statistics_scalar(...)``,
    ``(self.adv_buf - adv_mean) / adv_std``), as Spinning Up's TF1 buffers: the advantages
    are divided by their std alone, where this project adds ``EPS``."""

    @property
    def advantage_epsilon(self):
        return float(self.flags['adv_epsilon'])


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

    def write_row(self, loop, epoch, total_steps):
        if self.state.get('stored', 0) >= self.p.update_after:
            super().write_row(loop, epoch, total_steps)


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
class EpochsOneStepLate:
    """Seed 000 lines 217-218, 233 (``if t > 0 and t % steps_per_epoch == 0:``, ``epoch = t
    // steps_per_epoch``, ``logger.log_tabular('TotalEnvInteracts', t)``), as Spinning Up's
    first ``ddpg.py`` wrote it: ``t`` is the index of the step just taken, so an epoch ends
    one step after this loop's, the first epoch has ``steps_per_epoch + 1`` steps, its row
    says ``TotalEnvInteracts`` ``t`` (one less than the steps taken), and the last
    ``steps_per_epoch - 1`` steps of the run end no epoch: rows 1 to ``epochs - 1``."""

    def epoch_due(self, t, episode_ended):
        return t > 0 and t % self.p.steps_per_epoch == 0

    def write_row(self, loop, epoch, total_steps):
        super().write_row(loop, epoch, total_steps - 1)


class TestAtStart:
    """Seed 001 line 1535 (``evaluations = [evaluate_policy(policy)]``): the untrained policy
    is evaluated before training, as row Epoch 0."""

    def before_training(self, loop):
        super().before_training(loop)
        loop.end_epoch(0, 0, last=False)


def undo_reset(loop):
    """The training env, with the reset the loop has just made (if no step followed it)
    undone: the env's RNG is put back to what it was before it, or, after the run's first
    reset (with a seed), to what seeding alone gives (old gym's ``env.seed(seed)``). A
    reset's outcome depends on that RNG alone, so the next reset draws what the undone one
    drew: a seed that tests on its training env right after an episode, before resetting
    it, draws its test episodes from there."""
    episode = loop.episode
    if episode.start is not None and not episode.actions:  # (None: resuming, not replayed)
        if 'seed' in episode.start:
            from gymnasium.utils import seeding
            state = seeding.np_random(episode.start['seed'])[0].bit_generator.state
        else:
            state = episode.start['rng']
        loop.env.unwrapped.np_random.bit_generator.state = state
    return loop.env


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

    def after_last_step(self, loop):
        """Seed 001 line 1618 (``evaluations.append(evaluate_policy(policy))`` after the
        loop): one more evaluation and row, the run's last."""
        loop.end_epoch(loop.state['epoch'] + 1, loop.state['t'], last=True)

    def test_on(self, loop):
        """The training env (``evaluate_policy`` resets ``env``), as the seed left it: the
        seed resets it for the next episode only after the evaluation (line 1579), where the
        loop here already has (``undo_reset``); before the first evaluation its RNG is the
        one ``env.seed(seed)`` gives (line 1521)."""
        return undo_reset(loop), None

    def after_tests(self, loop, epoch):
        super().after_tests(loop, epoch)
        loop.episode.reset()  # the training episode starts after the evaluation's resets
        loop.reset_exploration()


class EvalSamples:
    """Seed 002 lines 29, 443-455 (``if epoch == self.n_epochs - 1:`` ...
    ``sample_rewards(env=self.env, ..., eval_samples=self.eval_samples, ...)``): test
    episodes only after the last epoch, ``eval_samples`` of them (one rollout per sample),
    on the training env, its RNG continued; the other rows have NaN test columns."""

    def test_episodes(self, epoch, last, n):
        return int(self.flags['eval_samples']) if last else 0

    def test_on(self, loop):
        """``sample_rewards(env=self.env, ...)``: the training env, its RNG continued; a reset
        of the loop's after the run's last step, which the seed never makes (it resets at
        the top of its next step, line 303), is undone (``undo_reset``)."""
        return undo_reset(loop), None


class RllabLogging:
    """Seed 002 lines 443-527 (``def evaluate(self, epoch, memory):``): rllab's columns
    (``spinup_tf.reproductions.rllab_logging``), with ``cumulative_es_stats`` lines 103,
    309, 495-511 (``self.strategy_path_returns`` is appended to and never cleared)."""

    def test_on(self, loop):
        """The test episodes' env, wrapped to store their discounted returns
        (``TestEpDiscRet``, rllab's ``AverageDiscountedReturn``)."""
        from spinup_tf.reproductions.rllab_logging import DiscountedReturns
        env, seed = super().test_on(loop)
        self.discounted = DiscountedReturns(env, self.config['gamma'], loop.logger)
        return self.discounted, seed

    def after_tests(self, loop, epoch):
        from spinup_tf.reproductions import rllab_logging
        super().after_tests(loop, epoch)
        if getattr(self, 'discounted', None) is not None:  # the last episode's
            self.discounted.flush()
            self.discounted = None
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
    """Seed 003 lines 467, 485-486 (``if args.test:`` ... ``get_action(state,
    explore_noise_scale=1.0)``, 300 frames of 150-step episodes): the seed never tests a
    deterministic policy. Its own metric is reported beside ours: after the deterministic
    test episodes, this many
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
        scale = self.config['act_noise']
        for _ in range(n):
            o, _ = env.reset()
            ep_ret, ep_len, done = 0.0, 0, False
            while not done:
                a = loop.agent.act(o) + scale * rng.standard_normal(low.shape)
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
MIXINS = [  # (flag, when it is on, mixin); stacked in this order over OnPolicyHooks
    ('hold_back_newest', lambda v: bool(v), HoldBackNewest),  # first: wraps the buffer
    ('noisy_test_episodes', lambda v: bool(v), NoisyTestEpisodes),
    ('rllab_logging', lambda v: bool(v), RllabLogging),
    ('eval_samples', lambda v: v is not None, EvalSamples),
    ('eval_at_episode_end', lambda v: bool(v), EvalAtEpisodeEnd),
    ('no_final_burst', lambda v: bool(v), NoFinalBurst),
    ('epochs_one_step_late', lambda v: bool(v), EpochsOneStepLate),
    ('test_at_start', lambda v: bool(v), TestAtStart),
    ('kl_new_old', lambda v: bool(v), KLNewOld),
    ('updates_wait_for_memory', lambda v: bool(v), UpdatesWaitForMemory),
    ('torch_adam', lambda v: bool(v), TorchAdam),  # before AdamEpsilon: its epsilon too
    ('adam_epsilon', lambda v: v != 1e-8, AdamEpsilon),
    ('sample_without_replacement', lambda v: bool(v), SampleWithoutReplacement),
    ('update_count_from', lambda v: bool(v), UpdateCountFrom),
    ('normalize_rewards', lambda v: bool(v), NormalizeRewards),
    ('bootstrap_with_reward', lambda v: bool(v), BootstrapWithReward),
    ('spinning_up_cg', lambda v: bool(v), SpinningUpCG),
    ('adv_epsilon', lambda v: v != 1e-8, AdvEpsilon),
    ('reward_lag', lambda v: bool(v), RewardLag),
    ('keep_truncated', lambda v: not v, DropTruncated),
    ('timeout_is_terminal', lambda v: bool(v), TimeoutIsTerminal),
    ('store_unclipped_actions', lambda v: bool(v), UnclippedOrUnitNoise),
    ('noise_in_unit_actions', lambda v: bool(v), UnclippedOrUnitNoise),
    ('spinning_up_start_steps', lambda v: bool(v), SpinningUpStartSteps),
    ('action_range', lambda v: v is not None, ActionRange),
]


def make_hooks(**flags):
    """The hooks of the quirks ``flags`` switch on (``QUIRK_FLAGS`` names; a flag at its
    default is off), over Spinning Up's ``OnPolicyHooks`` (all points of both loops): an
    instance of a class made of their mixins, with ``flags`` the non-default ones (what
    ``config.json`` records). An old flag name (``RENAMED_FLAGS``) is taken as today's."""
    flags = renamed(flags)
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
    cls = type('QuirkHooks', tuple(bases) + (OnPolicyHooks,), {})
    return cls(**set_flags)
