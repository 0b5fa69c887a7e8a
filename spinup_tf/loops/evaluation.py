"""Deterministic test episodes, and the best model they choose (``tf1_save_best/``), for
both loops.

Off-policy algorithms test their deterministic policy every epoch (``num_test_episodes``,
10 by default); on-policy ones do when their ``num_test_episodes`` option is above 0 (0 by
default, as Spinning Up), with the mean action of a Gaussian policy and the argmax of a
categorical one. After the test episodes of an epoch, the model is also saved to
``tf1_save_best/`` when the mean of their returns beats every earlier epoch's
(``python run.py test_policy DIR --best`` loads it; SB3's ``EvalCallback`` keeps the same).
"""
import numpy as np

from spinup_tf.utils.envs import seed_env
from spinup_tf.utils.signals import check_stop
from spinup_tf.utils.tf1 import tf

BEST_SUFFIX = '_best'
TEST_SEED_OFFSET = 10000


def run_test_episodes(test_env, act, n, max_ep_len, seed, state, logger, discount=None):
    """``n`` episodes of ``act(o)`` on ``test_env``; each is stored as ``TestEpRet``
    and ``TestEpLen``, and with a ``discount`` gamma also as ``TestEpDiscRet``
    :math:`= \\sum_t \\gamma^t r_t`. The first reset of the run (``state['test_seeded']``
    False) seeds the env with ``seed + 10000``; later ones continue its RNG (all of them
    with ``seed`` None).

    Ctrl-C / SIGTERM stop it at the next env step (``check_stop``). The phase is then undone
    before the interrupt goes on: the episodes it stored are dropped and the test env's RNG
    put back, so the checkpoint written next holds no partial test statistics and a resumed
    run tests that epoch again from the same start."""
    stored = {k: len(logger.epoch_dict.get(k, []))
              for k in ('TestEpRet', 'TestEpLen', 'TestEpDiscRet')}
    seeded = state.get('test_seeded')
    rng = test_env.unwrapped.np_random.bit_generator.state if seeded or seed is None else None
    try:
        _test_episodes(test_env, act, n, max_ep_len, seed, state, logger, discount)
    except KeyboardInterrupt:
        for k, count in stored.items():
            if k in logger.epoch_dict:
                del logger.epoch_dict[k][count:]
        state['test_seeded'] = seeded
        if rng is not None:
            test_env.unwrapped.np_random.bit_generator.state = rng
        raise


def _test_episodes(test_env, act, n, max_ep_len, seed, state, logger, discount):
    for _ in range(n):
        if seed is not None and not state.get('test_seeded'):
            o = seed_env(test_env, seed + TEST_SEED_OFFSET)
            state['test_seeded'] = True
        else:
            o, _ = test_env.reset()
        ep_ret, ep_disc_ret, ep_len, done = 0.0, 0.0, 0, False
        while not done:
            check_stop()  # Ctrl-C / SIGTERM: at the next step, also in a long test phase
            # Take deterministic actions at test time (no noise).
            o, r, terminated, truncated, _ = test_env.step(act(o))
            ep_ret += r
            if discount is not None:
                ep_disc_ret += discount ** ep_len * r
            ep_len += 1
            done = terminated or truncated or ep_len == max_ep_len
        logger.store(TestEpRet=ep_ret, TestEpLen=ep_len)
        if discount is not None:
            logger.store(TestEpDiscRet=ep_disc_ret)


def save_best(logger):
    """``save(state_dict)``: ``logger``'s model to ``tf1_save_best/``."""
    return lambda state_dict: logger.save_state(state_dict, suffix=BEST_SUFFIX)


def keep_best(logger, state, epoch, save):
    """``save({'epoch': epoch, 'AverageTestEpRet': mean})`` (see :func:`save_best`) when
    this epoch's mean ``TestEpRet`` (stored, not yet logged) is the best so far; the best is
    kept in ``state['best_test_return']`` (so in the checkpoint). ``save`` None (a loop
    driven without a model): nothing. Returns whether it saved."""
    returns = logger.epoch_dict.get('TestEpRet')
    if not returns or save is None:
        return False
    mean = float(np.mean(returns))
    best = state.get('best_test_return')
    if best is not None and not mean > best:
        return False
    save({'epoch': epoch, 'AverageTestEpRet': mean})
    state['best_test_return'] = mean
    return True


def deterministic_action(info, action_space):
    """The on-policy actor-critic's deterministic action from its ``info``: ``mu`` for a
    Box action space (the Gaussian's mean), ``argmax`` of ``logp_all`` for a Discrete one."""
    from gymnasium.spaces import Discrete
    if isinstance(action_space, Discrete):
        return tf.argmax(info['logp_all'], axis=1, output_type=tf.int32)
    return info['mu']
