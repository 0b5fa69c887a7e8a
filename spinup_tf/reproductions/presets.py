"""Named presets: each source document's own configuration, rebuilt as a TF1 graph, and the
per-environment defaults of the deterministic-policy algorithms.

``python run.py ALGO --preset NAME [--flag VALUE ...]`` starts from the preset's keyword
arguments (and env, unless ``--env`` is given); any flag given on the command line overrides
the preset's value.

``NAME`` is the seed as written, every quirk on. ``NAME-fixed`` is the same configuration
(networks, hyperparameters, budget) on Spinning Up's loop: each quirk of ``QUIRKS[NAME]``
set to its ``fixed`` value. Each quirk is a :class:`Quirk`: the flags that switch it, their
values in the seed and in the fixed variant, and the seed's lines it comes from (the README
table is made from ``QUIRKS``).
"""
from collections import namedtuple

from spinup_tf.utils.errors import UserInputError

Preset = namedtuple('Preset', 'env kwargs reproduces quirks')

Quirk = namedtuple('Quirk', 'seed fixed source what')
"""One quirk of a seed: ``seed`` (flags -> values, as the preset sets them), ``fixed`` (the
same flags -> Spinning Up's values, in ``NAME-fixed``), ``source`` (the seed's lines) and
``what`` (what the seed does)."""

FIXED_SUFFIX = '-fixed'

# Budgets are the seeds' own; plots/reproduce.py runs shorter "quick" budgets.
PRESETS = {
    'ddpg': {
        'seed-000': Preset(
            env='Pendulum-v1',
            kwargs=dict(ac_kwargs=dict(hidden_sizes=(400, 300)), update_at_episode_end=True,
                        tensorboard=True, update_after=0, steps_per_epoch=5000,
                        timeout_is_terminal=True, spinning_up_start_steps=True,
                        epochs_one_step_late=True),
            reproduces='seed 000: Spinning Up TF1 DDPG walkthrough (400-300 ReLU networks)',
            quirks='all updates at the end of each trajectory, one per step it had (from the '
                   "first trajectory on); old gym's done at Pendulum's 200-step limit stored as "
                   'terminal (timeout_is_terminal); start_steps + 1 random actions, as '
                   "Spinning Up's own loop (spinning_up_start_steps); epochs of 5000 steps, as "
                   'the Spinning Up code it copies ran, each ending one step late at t > 0 and '
                   't % 5000 == 0, logged with TotalEnvInteracts t, the last partial one not '
                   'logged: rows 1 to 99 (epochs_one_step_late); TensorBoard scalars of every '
                   'column (LossPi/LossQ for its pi_loss/q_loss) in <run>/tensorboard. The seed '
                   "names no env; Pendulum-v1 makes it comparable with rl-zoo's DDPG "
                   'benchmark.'),
        'rllab-mxnet': Preset(
            env='InvertedPendulum-v5',
            kwargs=dict(actor_critic='rllab', noise='ou', act_noise=0.3, batch_size=32,
                        q_lr=1e-3, pi_lr=1e-4, polyak=1 - 1e-3, update_every=1,
                        update_after=10000, start_steps=0, max_ep_len=100,
                        steps_per_epoch=1000, epochs=1000, gamma=0.99, rllab_logging=True,
                        noise_in_unit_actions=True, keep_truncated=False,
                        bootstrap_across_paths=True, eval_samples=10000,
                        cumulative_es_stats=True, updates_wait_for_memory=True,
                        hold_back_newest=True, replay_size=2000000),
            reproduces='seed 002: MXNet DDPG in rllab style',
            quirks="OU exploration strategy (theta 0.15, sigma 0.3, mu 0, reset every episode, "
                   "actions clipped) on rllab's normalised [-1, 1] action scale, so 3x larger "
                   "in InvertedPendulum units (noise_in_unit_actions); the transition that hits "
                   "the path horizon is not stored (include_horizon_terminal=False: "
                   "keep_truncated=False), so the transition before it bootstraps from the next "
                   "path's first observation (the memory stores observations only: "
                   "bootstrap_across_paths); the newest sample is never drawn "
                   "(hold_back_newest), and the memory holds every sample of the run "
                   "(replay_size 2e6 slots, as each episode end takes a stub slot here); one "
                   "evaluation, after the last epoch, on the training env, of 10000 "
                   "episodes of up to 100 steps (eval_samples: the MXNet utils' sample_rewards "
                   "runs one rollout per sample), with AverageDiscountedReturn; "
                   "Es* statistics over the whole run (cumulative_es_stats); updates and "
                   "progress rows wait until the memory holds 10000 stored samples "
                   "(updates_wait_for_memory); policy obs-32-32-tanh, Q obs-32-32 then the action "
                   "concatenated -32-1, both on the normalised actions (ac_kwargs unit_actions), "
                   "kernels ~ N(0, 0.01); batch 32, policy lr 1e-4, "
                   "tau 1e-3; one update per sample; epochs of 1000 steps; rllab column names "
                   "logged too. Q lr 1e-3, 10000 start samples and 100-step paths are the "
                   "upstream MXNet run script's; the seed's own signature says lr 1e-4, "
                   "memory_start_size 1000, max_path_length 1000 (--q_lr 1e-4 --update_after "
                   "1000 --max_ep_len 1000). rllab's box2d cart-pole is not in gymnasium: "
                   "InvertedPendulum-v5 (MuJoCo) stands in."),
    },
    'td3': {
        'blog-mountaincar': Preset(
            env='MountainCarContinuous-v0',
            kwargs=dict(ac_kwargs=dict(hidden_sizes=(256, 256)), epochs=50, noise='uniform',
                        act_noise=0.1, timeout_is_terminal=True, spinning_up_start_steps=True),
            reproduces='seed 001 v1: the TD3 blog run (Spinning Up TF1 TD3, hid 256x2, '
                       '50 epochs of 4000 steps)',
            quirks='exploration noise act_noise * np.random.rand(...) (uniform [0, 1): biased '
                   "towards positive actions), as the blog ran it; old gym's done at the "
                   "env's 999-step limit stored as terminal (timeout_is_terminal); "
                   "start_steps + 1 random actions, as Spinning Up's own loop "
                   '(spinning_up_start_steps).'),
        'udemy': Preset(
            env='AntBulletEnv-v0',
            kwargs=dict(actor_critic='udemy', ac_kwargs=dict(hidden_sizes=(400, 300)),
                        update_at_episode_end=True, update_after=0, policy_delay=2,
                        polyak=0.995, act_noise=0.1, start_steps=10000, steps_per_epoch=5000,
                        epochs=100, batch_size=100, gamma=0.99, target_noise=0.2,
                        noise_clip=0.5, pi_lr=1e-3, q_lr=1e-3, num_test_episodes=10,
                        test_at_start=True, eval_at_episode_end=True, no_final_burst=True,
                        torch_adam=True),
            reproduces='seed 001 v2: the udemy PyTorch TD3, rebuilt as a TF1 graph',
            quirks='400-300 ReLU actor, both critics in one "critic" scope, PyTorch nn.Linear '
                   'initialisation; training at the end of each episode for as many iterations '
                   'as it had steps, policy and both targets every 2 iterations, tau 0.005; '
                   "torch.optim.Adam's update, epsilon after the bias correction "
                   '(torch_adam); Gaussian exploration 0.1 clipped to the bounds; 10k random '
                   'steps; evaluation (10 episodes) before training (test_at_start: row Epoch '
                   '0), at the first episode end after every 5000 steps (the remainder kept) '
                   'and once after the last step, on the training env itself, reset only by '
                   'the evaluation and after it (eval_at_episode_end); no training burst '
                   'after the last step (no_final_burst); 500k steps; AntBulletEnv-v0 '
                   '(pybullet, through pybullet-envs-gymnasium). The seed records no video '
                   '(save_env_vid = False); --videos N records some of the final policy.'),
        'tensorlayer': Preset(
            env='Pendulum-v1',
            kwargs=dict(actor_critic='tensorlayer', ac_kwargs=dict(hidden_sizes=(32, 32)),
                        max_ep_len=150, normalize_rewards=True, updates_per_step=3,
                        update_every=1, update_after=64, policy_delay=3, act_noise=1.0,
                        target_noise=0.5, noise_clip=1.0, gamma=0.9, polyak=0.99,
                        pi_lr=3e-4, q_lr=3e-4, batch_size=64, start_steps=500,
                        steps_per_epoch=4005, epochs=10, action_range=1.0,
                        update_count_from=1, store_unclipped_actions=True,
                        spinning_up_start_steps=True, sample_without_replacement=True,
                        adam_epsilon=1e-7, noisy_test_episodes=2),
            reproduces='seed 003: the TensorLayer-2 TD3 tutorial on Pendulum',
            quirks='150-step episodes; policy with three hidden layers of 32, Q with two, '
                   'weights ~ U(-3e-3, 3e-3); batch reward normalisation; 3 updates per env '
                   'step once the buffer holds more than 64 transitions (update_after 64), '
                   'each on 64 distinct transitions (sample_without_replacement), with '
                   "Keras's Adam epsilon 1e-7 (adam_epsilon); policy and targets "
                   'on the 3rd of every 3 updates (its counter is incremented before it is '
                   'tested: update_count_from=1; 0 puts them on the 1st); exploration noise '
                   '1.0, the noisy action sent and stored unclipped (store_unclipped_actions); '
                   'target noise 0.5 clipped to +-1.0; '
                   'gamma 0.9, tau 1e-2, lr 3e-4, batch 64, 501 random steps '
                   '(spinning_up_start_steps), 40,050 frames (267 whole episodes of 150: 10 '
                   'epochs of 4005 steps); the seed\'s own noisy test metric logged beside '
                   'ours (noisy_test_episodes 2: NoisyTestEpRet). '
                   'action_range=1 keeps the tutorial\'s quirk: the policy acts in [-1, 1] '
                   'though Pendulum allows [-2, 2] (pass --action_range None to use the '
                   'bounds).'),
    },
    'trpo': {
        'blog-cartpole': Preset(
            env='CartPole-v1',
            kwargs=dict(ac_kwargs=dict(hidden_sizes=(64, 64)), steps_per_epoch=4000,
                        epochs=50, reward_lag=True, bootstrap_with_reward=True,
                        timeout_is_terminal=True, kl_new_old=True, spinning_up_cg=True,
                        adv_epsilon=0.0),
            reproduces='seed 004: the TRPO blog run (Spinning Up TF1 TRPO, 64x64 tanh)',
            quirks="the seed's loop as written: buf.store(o, a, r) before env.step stores each "
                   "step's previous reward, 0 at an episode's start (reward_lag); "
                   "last_val = r if d else V(o) bootstraps an ended trajectory with its last "
                   "reward (bootstrap_with_reward); old gym's d was true at CartPole's 500-step "
                   "limit, so the timeout is terminal (timeout_is_terminal); the Gaussian KL as "
                   "KL(new || old) (kl_new_old: Box actions only, so CartPole is unchanged); "
                   "Spinning Up's own conjugate gradient, float32 and all 10 iterations "
                   "(spinning_up_cg), and its advantages divided by their std with no epsilon "
                   "(adv_epsilon 0). NAME-fixed switches them off. The seed's env object as "
                   "env_fn is not kept."),
    },
}
PRESETS['npg'] = {'blog-cartpole': PRESETS['trpo']['blog-cartpole']._replace(
    reproduces='seed 004: the NPG variant of the TRPO blog run (full step, no line search)')}


# Spinning Up's update schedule (update_every 50 after 1000 steps), for the seeds that update
# at the end of each trajectory.
_SPINUP_SCHEDULE = dict(update_at_episode_end=False, update_after=1000)

QUIRKS = {
    'seed-000': [
        Quirk(dict(update_at_episode_end=True, update_after=0), _SPINUP_SCHEDULE,
              'seed 000 lines 190-195 (`if d or (ep_len == max_ep_len):` ... '
              '`for _ in range(ep_len):`)',
              'all updates at the end of each trajectory, one per step it had, from the '
              'first trajectory on'),
        Quirk(dict(timeout_is_terminal=True), dict(timeout_is_terminal=False),
              'seed 000 lines 174, 181 (`o2, r, d, _ = env.step(a)`, `d = False if '
              "ep_len==max_ep_len else d`; old gym's d is true at Pendulum's 200-step limit)",
              "the env's time limit, reached before max_ep_len, is stored as terminal: no "
              'bootstrap through it'),
        Quirk(dict(spinning_up_start_steps=True), dict(spinning_up_start_steps=False),
              'seed 000 line 168 (`if t > start_steps:`)',
              "start_steps + 1 random actions: Spinning Up's own test, which this "
              "project's default does not copy"),
        Quirk(dict(epochs_one_step_late=True), dict(epochs_one_step_late=False),
              'seed 000 lines 160, 217-218, 233 (`for t in range(total_steps):`, `if t > 0 '
              'and t % steps_per_epoch == 0:`, `epoch = t // steps_per_epoch`, '
              "`logger.log_tabular('TotalEnvInteracts', t)`)",
              'an epoch ends after the step of index t > 0 with t % 5000 == 0, one step late: '
              'the first epoch has 5001 steps, a row says TotalEnvInteracts t (one less than '
              'the steps taken), and the last 4999 steps end no epoch, so the rows are epochs '
              '1 to 99'),
    ],
    'rllab-mxnet': [
        Quirk(dict(keep_truncated=False), dict(keep_truncated=True),
              'seed 002 lines 43, 325-335 (`include_horizon_terminal=False`, `if not end and '
              'path_length >= self.max_path_length:` ... `if self.include_horizon_terminal:` '
              '... `else:`)',
              'the transition that reaches max_path_length is not stored, so nothing '
              'bootstraps through the time limit'),
        Quirk(dict(bootstrap_across_paths=True), dict(bootstrap_across_paths=False),
              'seed 002 lines 331-335, 343, 365 (`memory.add_sample(obs, act, rwd, end)`, '
              '`batch = memory.get_batch(self.batch_size)`, `obss, acts, rwds, ends, nxts = '
              'batch`; the MXNet example\'s ReplayMem.get_batch takes obss[idx + 1] as the next '
              'observation)',
              'the memory keeps no next observations, so when the horizon transition is '
              'dropped, the transition before it takes the next path\'s first observation '
              'as its next one, with end = 0: it bootstraps from a reset state'),
        Quirk(dict(hold_back_newest=True), dict(hold_back_newest=False),
              'seed 002 lines 271-277, 343 (`memory = ReplayMem(`, `batch = '
              'memory.get_batch(self.batch_size)`; the MXNet example\'s get_batch never draws '
              'idx == self.top, the newest sample)',
              'the newest sample is never drawn: its next observation is the next sample\'s, '
              'not stored yet (each sample enters the buffer when the next one is stored)'),
        Quirk(dict(replay_size=2000000), dict(replay_size=1000000),
              'seed 002 lines 21, 271-277 (`memory_size=1000000`, `memory = ReplayMem(`, '
              '`memory_size=self.memory_size)`)',
              'the memory holds every sample of the run: the seed\'s 1M samples are never '
              'overwritten in its 1M steps; here 2M slots, since each episode end takes a '
              'stub slot (1M slots wrap at about 960k steps)'),
        Quirk(dict(eval_samples=10000), dict(eval_samples=None),
              'seed 002 lines 29, 443-455 (`if epoch == self.n_epochs - 1:` ... '
              '`rewards = sample_rewards(env=self.env,` ... `eval_samples=self.eval_samples,`)',
              'test episodes only after the last epoch, 10000 of them (the MXNet '
              "example's utils.sample_rewards runs one rollout per sample), on the training "
              'env; the other rows have NaN test columns'),
        Quirk(dict(cumulative_es_stats=True), dict(cumulative_es_stats=False),
              'seed 002 lines 103, 309, 495-511 (`self.strategy_path_returns = []`, '
              '`self.strategy_path_returns.append(path_return)`, '
              '`np.mean(self.strategy_path_returns))`; never cleared)',
              'the *EsReturn columns are over every exploration episode of the run so far, '
              'not the epoch\'s'),
        Quirk(dict(updates_wait_for_memory=True), dict(updates_wait_for_memory=False),
              'seed 002 lines 339, 351-355 (`if memory.size >= self.memory_start_size:` '
              'around the updates and around `self.evaluate(epoch, memory)` / '
              '`logger.dump_tabular(with_prefix=False)`)',
              'update_after counts the samples stored, not env steps, and no progress row '
              'is written before the memory holds that many'),
    ],
    'blog-mountaincar': [
        Quirk(dict(noise='uniform'), dict(noise='gaussian'),
              'seed 001 line 331 (`a += noise_scale * np.random.rand(act_dim)`)',
              'exploration noise uniform in [0, act_noise): biased towards positive actions'),
        Quirk(dict(timeout_is_terminal=True), dict(timeout_is_terminal=False),
              'seed 001 line 364 (`d = False if ep_len==max_ep_len else d`; old gym\'s d is '
              "true at MountainCarContinuous-v0's 999-step limit)",
              "the env's time limit, reached before max_ep_len, is stored as terminal: no "
              'bootstrap through it'),
        Quirk(dict(spinning_up_start_steps=True), dict(spinning_up_start_steps=False),
              'seed 001 line 352 (`if t > start_steps:`)',
              "start_steps + 1 random actions: Spinning Up's own test, which this "
              "project's default does not copy"),
    ],
    'udemy': [
        Quirk(dict(update_at_episode_end=True, update_after=0), _SPINUP_SCHEDULE,
              'seed 001 lines 1562-1569 (`if done:` ... `policy.train(replay_buffer, '
              'episode_timesteps, batch_size,`)',
              'training at the end of each episode, as many iterations as it had steps'),
        Quirk(dict(torch_adam=True), dict(torch_adam=False),
              'seed 001 lines 1386, 1390 (`self.actor_optimizer = '
              'torch.optim.Adam(self.actor.parameters())`, `self.critic_optimizer = '
              'torch.optim.Adam(self.critic.parameters())`)',
              "torch's Adam: epsilon added to sqrt(v) after the bias correction, where "
              "tf.train.AdamOptimizer adds it before (since PyTorch 1.3; the seed does not "
              'say its version)'),
        Quirk(dict(test_at_start=True), dict(test_at_start=False),
              'seed 001 line 1535 (`evaluations = [evaluate_policy(policy)]`)',
              'an evaluation of the untrained policy before training (row Epoch 0)'),
        Quirk(dict(eval_at_episode_end=True), dict(eval_at_episode_end=False),
              'seed 001 lines 1474-1482, 1521, 1572-1579, 1618 (`obs = env.reset()` in '
              '`def evaluate_policy(policy, eval_episodes=10):`, `env.seed(seed)`, `if '
              'timesteps_since_eval >= eval_freq:`, `timesteps_since_eval %= eval_freq`, '
              '`evaluations.append(evaluate_policy(policy))`, `obs = env.reset()`)',
              'evaluations at the first episode end after every 5000 steps (the remainder '
              'kept), on the training env, and once after the last step: a row per '
              'evaluation; the env is reset by the evaluation\'s episodes and once after '
              'them, not before (the first evaluation draws from the freshly seeded env)'),
        Quirk(dict(no_final_burst=True), dict(no_final_burst=False),
              'seed 001 lines 1560-1569 (`while total_timesteps < max_timesteps:`, `if done:` '
              '... `if total_timesteps != 0:` ... `policy.train(`)',
              'an episode\'s training burst runs at the top of the next iteration, so none '
              'follows the last step, even when that step ends an episode'),
    ],
    'tensorlayer': [
        Quirk(dict(update_count_from=1), dict(update_count_from=0),
              'seed 003 lines 296, 340 (`self.update_cnt += 1` before '
              '`if self.update_cnt % self.policy_target_update_interval == 0:`)',
              'policy and target updates on the 3rd, 6th, ... update, not the 1st, 4th, ...'),
        Quirk(dict(store_unclipped_actions=True), dict(store_unclipped_actions=False),
              'seed 003 lines 235, 432, 443 (`action = self.action_range * action + noise`, '
              'stored by `replay_buffer.push(state, action, reward, next_state, done)` without '
              'a clip)',
              'noisy actions reach the env and the buffer outside the bounds (N(0, 1) noise '
              'on a [-1, 1] policy)'),
        Quirk(dict(action_range=1.0), dict(action_range=None),
              'seed 003 line 79 (`action_range = 1.`)',
              "the policy acts in [-1, 1] though Pendulum's torque range is [-2, 2]"),
        Quirk(dict(spinning_up_start_steps=True), dict(spinning_up_start_steps=False),
              'seed 003 line 431 (`if frame_idx > explore_steps:`)',
              '501 random actions, not 500 (the test of Spinning Up\'s own loop)'),
        Quirk(dict(sample_without_replacement=True), dict(sample_without_replacement=False),
              'seed 003 line 123 (`batch = random.sample(self.buffer, batch_size)`)',
              'each batch holds 64 distinct transitions (Spinning Up draws with replacement)'),
        Quirk(dict(adam_epsilon=1e-7), dict(adam_epsilon=1e-8),
              'seed 003 lines 273-275 (`tf.optimizers.Adam(q_lr)`, '
              '`tf.optimizers.Adam(policy_lr)`: Keras\'s epsilon 1e-7)',
              "Adam's epsilon 1e-7, where tf.train.AdamOptimizer has 1e-8"),
        Quirk(dict(noisy_test_episodes=2), dict(noisy_test_episodes=0),
              'seed 003 lines 467, 485-486 (`if args.test:` ... `action = '
              'td3_trainer.policy_net.get_action(state, explore_noise_scale=1.0)`)',
              "the seed's only test adds exploration noise: 2 such episodes per epoch, logged "
              'as NoisyTestEpRet beside the deterministic TestEpRet (training unchanged)'),
    ],
    'blog-cartpole': [
        Quirk(dict(reward_lag=True), dict(reward_lag=False),
              'seed 004 lines 535-537 (`buf.store(o, a, r, v_t, logp_t, info_t)` before '
              '`o, r, d, _ = env.step(a)`)',
              "each step is stored with the previous step's reward (0 at an episode's start)"),
        Quirk(dict(bootstrap_with_reward=True), dict(bootstrap_with_reward=False),
              'seed 004 line 546 (`last_val = r if d else sess.run(v, ...)`)',
              'a trajectory that ended is closed with its last reward instead of 0'),
        Quirk(dict(timeout_is_terminal=True), dict(timeout_is_terminal=False),
              "seed 004 line 541 (`terminal = d or (ep_len == max_ep_len)`; old gym's d is "
              'true at the 500-step limit)',
              "CartPole's time limit is a terminal state: no bootstrap with V(s_T)"),
        Quirk(dict(kl_new_old=True), dict(kl_new_old=False),
              'seed 004 line 274 (`d_kl = diagonal_guassian_kl(mu, log_std, old_mu_ph, '
              'old_log_std_ph)`; its categorical KL, line 260, is KL(old || new))',
              "the Gaussian KL is KL(new || old), ours KL(old || new): Box actions only"),
        Quirk(dict(spinning_up_cg=True), dict(spinning_up_cg=False),
              'seed 004 lines 233-236, 463-464, 473-486 (`buff = np.asarray(x, '
              'dtype=np.float32)`, `hvp += damping_coeff * v_ph`, `for _ in range(cg_iters):` '
              '... `r_dot_old = r_dot_new`)',
              "Spinning Up's own conjugate gradient (its TF1 trpo.py): float32 vectors (x_sum, "
              "Spinning Up's mpi_avg, casts g and each Hx), every one of the 10 iterations, "
              "no early exit; this project's default solves in float64 and stops once the "
              'residual is below 1e-10'),
        Quirk(dict(adv_epsilon=0.0), dict(adv_epsilon=1e-8),
              'seed 004 lines 238-243, 357-358 (`std = np.sqrt(x_sum_sq/x_n)`, `adv_mean, '
              'adv_std = statistics_scalar(self.adv_buf)`, `self.adv_buf = (self.adv_buf - '
              'adv_mean) / adv_std`)',
              "advantages divided by their std alone, as Spinning Up's TF1 buffers; this "
              "project's default adds 1e-8 (which float32 rounds away unless the std is "
              'below about 0.2)'),
    ],
}


def fixed_kwargs(name):
    """The keyword arguments of ``NAME-fixed``: the preset's, each quirk at its fixed value."""
    kwargs = None
    for algo in PRESETS:
        if name in PRESETS[algo]:
            kwargs = dict(PRESETS[algo][name].kwargs)
    for quirk in QUIRKS.get(name, []):
        kwargs.update(quirk.fixed)
    return kwargs


def preset_names(algo):
    """Every preset name of ``algo``: the seeds' and their ``-fixed`` variants."""
    names = []
    for name in PRESETS.get(algo, {}):
        names.append(name)
        if QUIRKS.get(name):
            names.append(name + FIXED_SUFFIX)
    return names


def get_preset(algo, name):
    """The ``Preset`` called ``name`` for ``algo`` (``NAME-fixed``: the quirk-free variant);
    a ``UserInputError`` lists the valid ones."""
    table = PRESETS.get(algo, {})
    if name in table:
        return table[name]
    base = name[:-len(FIXED_SUFFIX)] if name.endswith(FIXED_SUFFIX) else None
    if base in table and QUIRKS.get(base):
        p = table[base]
        return p._replace(kwargs=fixed_kwargs(base),
                          reproduces=p.reproduces + ', every quirk fixed',
                          quirks='none: ' + '; '.join(
                              '%s (%s)' % (q.what, ', '.join('--%s %s' % kv
                                                             for kv in q.fixed.items()))
                              for q in QUIRKS[base]))
    valid = ', '.join('%s %s' % (a, n) for a in PRESETS for n in preset_names(a))
    raise UserInputError('unknown preset %r for %s; presets: %s' % (name, algo, valid))


def describe_presets(algo):
    """Lines for ``--help``: the presets of ``algo``."""
    table = PRESETS.get(algo, {})
    if not table:
        return []
    lines = ['presets (--preset NAME; NAME-fixed: the same with every quirk fixed):']
    for name, p in table.items():
        lines.append('  %-18s env %s; %s' % (name, p.env, p.reproduces))
    return lines


def quirk_table():
    """The README's quirk table, made from ``QUIRKS``: one Markdown row per quirk, with the
    seed's lines, what it does and its flags (``NAME`` -> ``NAME-fixed``)."""
    def flags(values):
        return ' '.join('`--%s %s`' % kv for kv in values.items())
    rows = ['| preset | what the seed does (its lines): the quirk | flags: `NAME` → `NAME-fixed` |',
            '|---|---|---|']
    for name, quirks in QUIRKS.items():
        for q in quirks:
            rows.append('| %s | %s: %s | %s → %s |' % (name, q.source, q.what, flags(q.seed),
                                                      flags(q.fixed)))
    return '\n'.join(rows)
