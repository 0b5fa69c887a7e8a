"""The valid range of every hyperparameter, declared once for all algorithms (a name means
the same thing in each), and checked before a run writes anything.

``check_ranges(config)`` raises ``UserInputError`` naming the flag, the value and its range
for the first value out of range; names not in ``RANGES`` are not checked here (the
algorithms check their own special values, e.g. SAC's ``alpha='auto'``).
"""
from spinup_tf.utils.errors import UserInputError

SEED_LIMIT = 2 ** 32


def _range(kind, low=None, high=None, low_open=False, high_open=False):
    return dict(kind=kind, low=low, high=high, low_open=low_open, high_open=high_open)


COUNT = _range(int, 1)              # a number of things, at least one
COUNT0 = _range(int, 0)             # a number of things, possibly none
RATE = _range(float, 0, low_open=True)                  # > 0
SCALE = _range(float, 0)                                # >= 0
FACTOR = _range(float, 0, 1)                            # in [0, 1]
OPEN_FACTOR = _range(float, 0, 1, True, True)           # in (0, 1)

RANGES = dict(
    seed=_range(int, 0, SEED_LIMIT, high_open=True),
    steps_per_epoch=COUNT, epochs=COUNT, batch_size=COUNT, replay_size=COUNT,
    update_every=COUNT, policy_delay=COUNT, updates_per_step=COUNT, max_ep_len=COUNT,
    train_pi_iters=COUNT, train_v_iters=COUNT, cg_iters=COUNT, backtrack_iters=COUNT,
    start_steps=COUNT0, update_after=COUNT0, num_test_episodes=COUNT0, save_freq=COUNT0,
    gamma=FACTOR, polyak=FACTOR, lam=FACTOR, backtrack_coeff=OPEN_FACTOR,
    clip_ratio=RATE, target_kl=RATE, delta=RATE, damping_coeff=SCALE,
    pi_lr=RATE, q_lr=RATE, lr=RATE, vf_lr=RATE,
    act_noise=SCALE, target_noise=SCALE, noise_clip=SCALE,
    eval_samples=COUNT, videos=COUNT0,
    gradient_steps=COUNT, target_update_interval=COUNT, exploration_fraction=FACTOR,
    eps_start=FACTOR, eps_end=FACTOR, max_grad_norm=SCALE,
    update_count_from=COUNT0, noisy_test_episodes=COUNT0, adam_epsilon=RATE, action_range=RATE,
)


def describe(r):
    if r['kind'] is int:
        if r['high'] is None:
            return 'an integer >= %d' % r['low']
        return 'an integer in [%d, %d)' % (r['low'], r['high'])
    low = '(' if r['low_open'] else '['
    if r['high'] is None:
        return 'a number %s %g' % ('>' if r['low_open'] else '>=', r['low'])
    return 'a number in %s%g, %g%s' % (low, r['low'], r['high'], ')' if r['high_open'] else ']')


def in_range(value, r):
    if isinstance(value, bool):
        return False
    if r['kind'] is int:
        if not isinstance(value, int):
            return False
    elif not isinstance(value, (int, float)) or value != value:  # NaN is in no range
        return False
    if r['low'] is not None and (value < r['low'] or (r['low_open'] and value == r['low'])):
        return False
    if r['high'] is not None and (value > r['high'] or (r['high_open'] and value == r['high'])):
        return False
    return True


def check_ranges(config):
    """``UserInputError`` for the first value of ``config`` outside its declared range, then
    for settings that cannot work together (``spinup_tf.utils.budget.check_budget``: a run
    that would never train, a replay buffer beyond the machine's memory)."""
    from spinup_tf.utils.budget import check_budget
    for name, r in RANGES.items():
        if name in config and config[name] is not None and not in_range(config[name], r):
            raise UserInputError('--%s must be %s, got %r' % (name, describe(r), config[name]))
    check_budget(config)


def check_ac_kwargs(actor_critic, ac_kwargs, set_by_run=('x', 'a', 'action_space')):
    """``UserInputError`` unless ``ac_kwargs`` is a dict of keyword arguments that
    ``actor_critic`` takes, with ``hidden_sizes`` a list of positive integers and the
    activations functions (or their names, or None). ``set_by_run``: the arguments the
    algorithm passes itself."""
    import inspect
    from spinup_tf.utils.flags import ACTIVATIONS
    if ac_kwargs is None:
        return
    example = '"{\'hidden_sizes\': [64, 64]}"'
    if not isinstance(ac_kwargs, dict):
        raise UserInputError('--ac_kwargs must be a dict such as %s, got %r'
                             % (example, ac_kwargs))
    try:
        sig = inspect.signature(actor_critic)
    except (TypeError, ValueError):
        return  # a callable without a signature: nothing to check against
    params = sig.parameters.values()
    takes_any = any(p.kind == p.VAR_KEYWORD for p in params)
    known = [p.name for p in params if p.name not in set_by_run
             and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    name = getattr(actor_critic, '__name__', 'the actor_critic')
    for key, value in ac_kwargs.items():
        if key in set_by_run:
            raise UserInputError('--ac_kwargs: %r is set by the algorithm, not by you' % key)
        if key not in known and not takes_any:
            raise UserInputError('--ac_kwargs: unknown key %r; %s takes %s'
                                 % (key, name, ', '.join(known) or 'none'))
    if 'hidden_sizes' in ac_kwargs:
        hs = ac_kwargs['hidden_sizes']
        if not isinstance(hs, (list, tuple)) or not all(
                isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in hs):
            raise UserInputError('--ac_kwargs: hidden_sizes must be a list of positive '
                                 'integers such as [64, 64], got %r' % (hs,))
    for key in ('activation', 'output_activation'):
        value = ac_kwargs.get(key)
        if isinstance(value, str):
            if value not in ACTIVATIONS:
                raise UserInputError('--ac_kwargs: unknown %s %r; choose from %s'
                                     % (key, value, ', '.join(sorted(ACTIVATIONS))))
        elif value is not None and not callable(value):
            raise UserInputError('--ac_kwargs: %s must be an activation function or its '
                                 'name, got %r' % (key, value))
