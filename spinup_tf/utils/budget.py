"""Settings that cannot work, refused before a run writes anything: a replay buffer larger
than the machine's memory, and an off-policy schedule under which no gradient update ever
happens.

* :func:`check_replay_memory` compares the bytes of the replay buffer
  (``spinup_tf.loops.replay_buffer``'s layout: ``N`` slots of ``obs_dim + act_dim + 2``
  float32 and one flag byte) with the memory this process can have
  (:func:`available_memory`): ``MemAvailable`` of ``/proc/meminfo``, lowered by a cgroup
  limit, else the physical memory).
* :func:`check_can_train` refuses a run whose first update would come after its last step:
  ``--update_after 100000`` or ``--update_every 1000`` on a 600-step run would otherwise end
  with exit status 0, zero updates and NaN loss columns.

``check_budget(config)`` runs both where the dimensions are not known yet (the memory check
with one-dimensional observations and actions, a lower bound: a request for a trillion slots
is refused however small the env); the command line and ``resume`` call
:func:`check_replay_memory` again with the env's sizes.
"""
import os

from spinup_tf.utils.errors import UserInputError

SLOT_FLAG_BYTES = 1  # RingLayout.valid


def replay_buffer_bytes(replay_size, obs_dim, act_dim):
    """Bytes of a replay buffer of ``replay_size`` slots (see the module docstring)."""
    return int(replay_size) * ((int(obs_dim) + int(act_dim) + 2) * 4 + SLOT_FLAG_BYTES)


def _meminfo_available():
    try:
        with open('/proc/meminfo') as f:
            for line in f:
                if line.startswith('MemAvailable:'):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_limit():
    for path in ('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2 ** 60:
            return int(text)
    return None


def available_memory():
    """Bytes of memory a new allocation can count on (see the module docstring); None when
    the platform says nothing."""
    candidates = [m for m in (_meminfo_available(), _cgroup_limit()) if m]
    if not candidates:
        try:
            candidates = [os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE')]
        except (ValueError, OSError, AttributeError):
            return None
    return min(candidates)


def check_replay_memory(replay_size, obs_dim=1, act_dim=1, available=None):
    """``UserInputError`` when a replay buffer of ``replay_size`` slots needs more memory
    than is available (``available``: bytes, measured when None)."""
    from spinup_tf.utils.safe_files import human_bytes
    if isinstance(replay_size, bool) or not isinstance(replay_size, int) or replay_size <= 0:
        return  # the range check names a bad value
    need = replay_buffer_bytes(replay_size, obs_dim, act_dim)
    available = available_memory() if available is None else available
    if available is not None and need > available:
        raise UserInputError('--replay_size %d needs %s for the replay buffer (%d slots of %d '
                             'observation and %d action numbers), but this machine has %s '
                             'available; choose a smaller --replay_size'
                             % (replay_size, human_bytes(need), replay_size, obs_dim, act_dim,
                                human_bytes(available)))


def first_update_step(config):
    """The step index ``t`` of an off-policy run's first gradient update, from its
    ``update_after`` and ``update_every`` (the loop updates at ``t >= update_after`` with
    ``t % update_every == 0``); None for a config without them."""
    after, every = config.get('update_after'), config.get('update_every')
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (after, every)) \
            or after < 0 or every < 1:
        return None
    return -(-after // every) * every


def check_can_train(config):
    """``UserInputError`` when an off-policy run's settings allow no gradient update within
    its ``steps_per_epoch * epochs`` steps."""
    spe, epochs = config.get('steps_per_epoch'), config.get('epochs')
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (spe, epochs)):
        return
    total = spe * epochs
    after = config.get('update_after')
    if config.get('update_at_episode_end'):  # updates at an episode's end, once filled
        if isinstance(after, int) and not isinstance(after, bool) and after > total:
            raise UserInputError('this run would never train: with --update_at_episode_end its '
                                 'updates start once the buffer holds --update_after %d '
                                 'transitions, more than its %d steps (--steps_per_epoch %d x '
                                 '--epochs %d); lower --update_after or run longer'
                                 % (after, total, spe, epochs))
        return
    first = first_update_step(config)
    if first is not None and first > total - 1:
        raise UserInputError('this run would never train: its first update would come at env '
                             'step %d (the first multiple of --update_every %d from '
                             '--update_after %d, plus one), but it runs only %d steps '
                             '(--steps_per_epoch %d x --epochs %d); lower --update_after or '
                             '--update_every, or run longer'
                             % (first + 1, config['update_every'], after, total, spe, epochs))


def check_budget(config):
    """:func:`check_can_train` and a lower bound of :func:`check_replay_memory` (one
    observation and one action number per slot), on an algorithm's full config."""
    check_can_train(config)
    check_replay_memory(config.get('replay_size'))
