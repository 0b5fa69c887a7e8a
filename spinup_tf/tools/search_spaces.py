"""The search space of ``run.py tune`` for every algorithm, in one table (``SPACES``).

Each dimension is an Optuna parameter and the ``run.py`` flag(s) it sets. The spaces follow
rl-baselines3-zoo's ``rl_zoo3/hyperparams_opt.py`` (``sample_td3_params`` and its siblings),
translated into Spinning Up's flags; ``zoo`` says, per dimension, what zoo samples and where
this table differs:

=====================  ===================================================================
off-policy (TD3, DDPG, SAC)
gamma                  zoo: the same 7 values
lr -> pi_lr, q_lr      zoo: one learning_rate for both nets, loguniform(1e-5, 1); here capped
                       at 1e-2 (SAC: its one ``lr``)
batch_size             zoo: also 1024 and 2048, left out (CPU time)
replay_size            zoo buffer_size: the same 3 values
polyak                 zoo tau: the same 6 values, as polyak = 1 - tau
update_every           zoo train_freq with gradient_steps = train_freq (our update_every
                       does update_every updates every update_every steps): 8-256, plus
                       Spinning Up's 50; zoo's 1, 4 and 512 left out (a window of one or four
                       updates per session call is slow)
noise, act_noise       zoo noise_type (normal, ornstein-uhlenbeck, None) and noise_std
                       uniform(0, 1); here gaussian, ou or pink, and None is act_noise near 0
                       (TD3 and DDPG)
alpha                  zoo ent_coef: 'auto' only; here 0.05, 0.1, 0.2 (the default) or 'auto'
                       (SAC)
start_steps            zoo learning_starts: the same 4 values (SAC)
hid                    zoo net_arch small, medium, big: [64,64], [256,256], [400,300]
DQN
gamma, batch_size      as off-policy
lr                     zoo learning_rate: loguniform(1e-5, 1); here capped at 1e-2
replay_size            zoo buffer_size: 1e4, 5e4, 1e5, 1e6
eps_end                zoo exploration_final_eps: uniform(0, 0.2)
exploration_fraction   zoo: uniform(0, 0.5)
target_update_interval zoo: 1, 1000, 5000, 10000, 15000, 20000
start_steps,           zoo learning_starts: 0, 1000, 5000, 10000, 20000, plus SB3's
update_after           default 100
update_every           zoo train_freq: 1, 4, 8, 16, 128, 256, 1000; 1 left out (slow)
gradient_steps         zoo: train_freq // subsample_steps (1, 2, 4, 8); here 1-128 on
                       their own
hid                    zoo net_arch tiny, small, medium: [64], [64,64], [256,256]
on-policy (VPG, PPO, TRPO, NPG)
gamma                  zoo (PPO, A2C): 1 - loguniform(1e-4, 0.03)
lam                    zoo gae_lambda: 1 - loguniform(1e-4, 0.1)
pi_lr                  zoo learning_rate: loguniform(1e-5, 2e-3) (VPG, PPO)
vf_lr                  zoo shares one rate; here the value net's own, loguniform(1e-5, 1e-2)
train_v_iters          zoo TRPO n_critic_updates (5-30); here 5-80, 80 the default
clip_ratio             zoo clip_range: the same 4 values (PPO)
train_pi_iters         zoo n_epochs x minibatches; here full-batch steps 5-80 (PPO)
target_kl              not in zoo's PPO; zoo TRPO's target_kl values (PPO)
delta                  zoo TRPO target_kl: the same 7 values (TRPO, NPG)
cg_iters               zoo cg_max_steps: the same 5 values (TRPO, NPG)
hid, act               zoo net_arch tiny, small, medium: [64], [64,64], [256,256]; tanh or
                       relu
not tuned              zoo n_steps: our steps_per_epoch sets the epochs in which the budget
                       and the pruner count; ent_coef, max_grad_norm: no such flag
=====================  ===================================================================

A flag given on ``run.py tune``'s command line is fixed for every trial and leaves the space.
Imports nothing heavy.
"""
from collections import namedtuple

# kind: 'choice' (values: the choices), 'log' and 'float' (values: (low, high), log-uniform
# or uniform), 'one_minus_log' (values: (low, high); the flag gets 1 - x, x log-uniform).
Dim = namedtuple('Dim', 'name kind values flags zoo')

GAMMAS = [0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 0.9999]
OFF_POLICY = [
    Dim('gamma', 'choice', GAMMAS, ('gamma',), 'gamma: the same'),
    Dim('lr', 'log', (1e-5, 1e-2), ('pi_lr', 'q_lr'), 'learning_rate: loguniform(1e-5, 1)'),
    Dim('batch_size', 'choice', [16, 32, 64, 100, 128, 256, 512], ('batch_size',),
        'batch_size: also 1024, 2048'),
    Dim('replay_size', 'choice', [10000, 100000, 1000000], ('replay_size',),
        'buffer_size: the same'),
    Dim('polyak', 'choice', [0.92, 0.95, 0.98, 0.99, 0.995, 0.999], ('polyak',),
        'tau: the same, as 1 - tau'),
    Dim('update_every', 'choice', [8, 16, 32, 50, 64, 128, 256], ('update_every',),
        'train_freq = gradient_steps: 1-512'),
]
NOISE = [
    Dim('noise', 'choice', ['gaussian', 'ou', 'pink'], ('noise',),
        'noise_type: normal, ornstein-uhlenbeck, None'),
    Dim('act_noise', 'float', (0.0, 1.0), ('act_noise',), 'noise_std: uniform(0, 1)'),
]
OFF_POLICY_NETS = [
    Dim('hid', 'choice', ['[64,64]', '[256,256]', '[400,300]'], ('hid',),
        'net_arch: small, medium, big'),
]
SAC = [
    Dim('alpha', 'choice', [0.05, 0.1, 0.2, 'auto'], ('alpha',), "ent_coef: 'auto'"),
    Dim('start_steps', 'choice', [0, 1000, 10000, 20000], ('start_steps',),
        'learning_starts: the same'),
]
DQN = [
    Dim('gamma', 'choice', GAMMAS, ('gamma',), 'gamma: the same'),
    Dim('lr', 'log', (1e-5, 1e-2), ('lr',), 'learning_rate: loguniform(1e-5, 1)'),
    Dim('batch_size', 'choice', [16, 32, 64, 100, 128, 256, 512], ('batch_size',),
        'batch_size: the same'),
    Dim('replay_size', 'choice', [int(1e4), int(5e4), int(1e5), int(1e6)], ('replay_size',),
        'buffer_size: the same'),
    Dim('eps_end', 'float', (0.0, 0.2), ('eps_end',), 'exploration_final_eps: the same'),
    Dim('exploration_fraction', 'float', (0.0, 0.5), ('exploration_fraction',),
        'exploration_fraction: the same'),
    Dim('target_update_interval', 'choice', [1, 1000, 5000, 10000, 15000, 20000],
        ('target_update_interval',), 'target_update_interval: the same'),
    Dim('start_steps', 'choice', [0, 100, 1000, 5000, 10000, 20000],
        ('start_steps', 'update_after'), 'learning_starts: the same, and SB3\'s default 100'),
    Dim('update_every', 'choice', [4, 8, 16, 128, 256, 1000], ('update_every',),
        'train_freq: also 1'),
    Dim('gradient_steps', 'choice', [1, 2, 4, 8, 16, 32, 64, 128], ('gradient_steps',),
        'train_freq // subsample_steps (1, 2, 4, 8)'),
    Dim('hid', 'choice', ['[64]', '[64,64]', '[256,256]'], ('hid',),
        'net_arch: tiny, small, medium'),
]
ON_POLICY = [
    Dim('one_minus_gamma', 'one_minus_log', (1e-4, 0.03), ('gamma',),
        'one_minus_gamma: the same'),
    Dim('one_minus_lam', 'one_minus_log', (1e-4, 0.1), ('lam',),
        'one_minus_gae_lambda: the same'),
    Dim('vf_lr', 'log', (1e-5, 1e-2), ('vf_lr',), 'one learning_rate for both'),
    Dim('train_v_iters', 'choice', [5, 10, 20, 40, 80], ('train_v_iters',),
        'n_critic_updates (TRPO): 5-30'),
]
ON_POLICY_NETS = [
    Dim('hid', 'choice', ['[64]', '[64,64]', '[256,256]'], ('hid',),
        'net_arch: tiny, small, medium'),
    Dim('act', 'choice', ['tanh', 'relu'], ('act',), 'activation_fn: the same'),
]
PI_LR = [Dim('pi_lr', 'log', (1e-5, 2e-3), ('pi_lr',), 'learning_rate: the same')]
PPO = [
    Dim('clip_ratio', 'choice', [0.1, 0.2, 0.3, 0.4], ('clip_ratio',), 'clip_range: the same'),
    Dim('train_pi_iters', 'choice', [5, 10, 20, 40, 80], ('train_pi_iters',),
        'n_epochs: 1-20, over minibatches'),
    Dim('target_kl', 'choice', [0.005, 0.01, 0.02, 0.05], ('target_kl',),
        'not tuned for PPO (TRPO: 0.001-0.1)'),
]
TRPO = [
    Dim('delta', 'choice', [0.001, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1], ('delta',),
        'target_kl (TRPO): the same'),
    Dim('cg_iters', 'choice', [5, 10, 20, 25, 30], ('cg_iters',), 'cg_max_steps: the same'),
]

SPACES = {
    'td3': OFF_POLICY + NOISE + OFF_POLICY_NETS,
    'ddpg': OFF_POLICY + NOISE + OFF_POLICY_NETS,
    'sac': [d._replace(flags=('lr',)) if d.name == 'lr' else d for d in OFF_POLICY]
    + SAC + OFF_POLICY_NETS,
    'vpg': ON_POLICY + PI_LR + ON_POLICY_NETS,
    'ppo': ON_POLICY + PI_LR + PPO + ON_POLICY_NETS,
    'trpo': ON_POLICY + TRPO + ON_POLICY_NETS,
    'npg': ON_POLICY + TRPO + ON_POLICY_NETS,
    'dqn': DQN,
}

# The network each algorithm builds when no --hid/--act is given (its actor-critic's defaults;
# tests/test_tune.py reads them from the source to keep these equal).
DEFAULT_NETS = {'td3': {'hid': '[256,256]'}, 'ddpg': {'hid': '[256,256]'},
                'sac': {'hid': '[256,256]'}, 'dqn': {'hid': '[64,64]'}}
for _name in ('vpg', 'ppo', 'trpo', 'npg'):
    DEFAULT_NETS[_name] = {'hid': '[64,64]', 'act': 'tanh'}


def space(algo, fixed=()):
    """The dimensions of ``algo``'s space less those setting a flag in ``fixed``."""
    fixed = set(fixed)
    return [d for d in SPACES[algo] if not fixed.intersection(d.flags)]


def suggest(trial, dims):
    """Sample ``dims`` with an Optuna ``trial``; returns ``{flag: value}``."""
    flags = {}
    for d in dims:
        if d.kind == 'choice':
            x = trial.suggest_categorical(d.name, d.values)
        elif d.kind in ('log', 'one_minus_log'):
            x = trial.suggest_float(d.name, *d.values, log=True)
        else:
            x = trial.suggest_float(d.name, *d.values)
        value = 1.0 - x if d.kind == 'one_minus_log' else x
        for flag in d.flags:
            flags[flag] = value
    return flags


def as_params(dims, defaults):
    """The Optuna parameters that reproduce the flag values ``defaults`` (``{flag: value}``,
    with ``hid``/``act`` as their tokens): ``(params, complete)``, ``complete`` False when a
    dimension's default lies outside its space (that parameter is then left to the
    sampler)."""
    params, complete = {}, True
    for d in dims:
        values = {defaults.get(f) for f in d.flags}
        value = values.pop() if len(values) == 1 else None
        if value is None:
            complete = False
            continue
        if d.kind == 'one_minus_log':
            value = 1.0 - value
        if d.kind == 'choice':
            same = [v for v in d.values if _same(value, v)]
            value = same[0] if same else None
        elif not (_number(value) and d.values[0] <= value <= d.values[1]):
            value = None
        if value is None:
            complete = False
        else:
            params[d.name] = value
    return params, complete


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _same(a, b):
    """``a == b`` without ``True == 1`` or ``'1' == 1`` slips."""
    return a == b and isinstance(a, str) == isinstance(b, str) and \
        isinstance(a, bool) == isinstance(b, bool)


def flag_tokens(flags):
    """``{flag: value}`` as ``run.py`` tokens: ``['--pi_lr', '0.00031', '--hid', '[64,64]']``
    (``repr`` of numbers, so a value reads back exactly)."""
    tokens = []
    for flag, value in flags.items():
        tokens += ['--' + flag, value if isinstance(value, str) else repr(value)]
    return tokens
