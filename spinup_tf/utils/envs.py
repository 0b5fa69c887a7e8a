"""Environment construction and the space checks each algorithm relies on.

Every failure here is a ``UserInputError`` with a message fit to show a user as is.
"""
import contextlib
import difflib
import importlib
import os
import sys

import numpy as np
import gymnasium as gym
from gymnasium.spaces import Box, Discrete

from spinup_tf.utils.errors import UserInputError


class EnvFn:
    """A picklable, JSON-describable env factory: ``EnvFn('Pendulum-v1')()`` makes the env.

    Args:
        env_id (str): gymnasium id.
        kwargs (dict): extra keyword arguments for ``gym.make``.
    """

    def __init__(self, env_id, **kwargs):
        self.env_id = env_id
        self.kwargs = kwargs

    def __call__(self, **extra):
        return make_env(self.env_id, **{**self.kwargs, **extra})

    def __repr__(self):
        return 'EnvFn(%r%s)' % (self.env_id, ''.join(', %s=%r' % kv for kv in self.kwargs.items()))


# Packages that register more envs with gymnasium when imported: pybullet's
# (AntBulletEnv-v0, the udemy seed's env) and ale-py's (the Atari games), imported only when
# an id is not found otherwise.
ENV_PLUGINS = ('pybullet_envs_gymnasium', 'ale_py')


def _import_env_plugins():
    for module in ENV_PLUGINS:
        try:
            with c_output_silenced():  # pybullet's "pybullet build time: ..." banner
                importlib.import_module(module)
        except ImportError:
            pass


@contextlib.contextmanager
def c_output_silenced(fds=(1, 2)):
    """Send what C code writes to ``fds`` (stdout, stderr) to /dev/null for the block:
    pybullet prints a banner on import and ``argv[0]=`` each time an env connects. Python's
    own streams are flushed first, and exceptions still propagate."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(fd) for fd in fds]
    try:
        with open(os.devnull, 'w') as null:
            for fd in fds:
                os.dup2(null.fileno(), fd)
            yield
    finally:
        _flush_c_streams()  # what C buffered goes to /dev/null, not later to the terminal
        for fd, copy in zip(fds, saved):
            os.dup2(copy, fd)
            os.close(copy)


def check_env_id(env_id):
    """Raise ``UserInputError`` (with close matches) when ``env_id`` is not registered."""
    if not isinstance(env_id, str):
        raise UserInputError('the env id must be a gymnasium id (a string), got %r' % (env_id,))
    if env_id in gym.registry:
        return
    _import_env_plugins()
    if env_id in gym.registry:
        return
    close = [c for c in difflib.get_close_matches(env_id, list(gym.registry.keys()), n=6,
                                                  cutoff=0.6) if _loadable(c)][:3]
    hint = ' Did you mean: %s?' % ', '.join(close) if close else ''
    raise UserInputError('unknown environment id %r.%s' % (env_id, hint))


def _loadable(env_id):
    """Whether the module behind ``env_id``'s entry point imports (a suggestion must be an
    env this install can make: gymnasium's ``phys2d/...`` ids need jax)."""
    entry = gym.registry[env_id].entry_point
    if not isinstance(entry, str):
        return True
    try:
        importlib.import_module(entry.split(':')[0])
    except Exception:  # ImportError, or gymnasium's DependencyNotInstalled
        return False
    return True


def has_display():
    """Whether a window can be opened: on Windows and macOS always, elsewhere when
    ``DISPLAY`` or ``WAYLAND_DISPLAY`` is set."""
    if sys.platform in ('win32', 'darwin'):
        return True
    return bool(os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY'))


ENV_FILE_LIMIT = 256 * 1024 * 1024  # a file an env reads (a MuJoCo model's XML, a map)


def _path_values(kwargs, depth=0):
    """``(key, string)`` of every string among the keyword arguments' values (in lists and
    dicts too, two levels down): the ones that may name a file the env opens."""
    for key, value in kwargs.items():
        values = [value]
        while values:
            v = values.pop()
            if isinstance(v, str):
                yield key, v
            elif isinstance(v, (list, tuple)) and depth < 2:
                values.extend(v[:1000])
            elif isinstance(v, dict) and depth < 2:
                yield from _path_values({key: x for x in list(v.values())[:1000]}, depth + 1)


def check_env_kwargs(env_id, kwargs):
    """``UserInputError`` for keyword arguments that would hang or crash the env rather than
    be refused by it: ``render_mode='human'`` where no window can open (MuJoCo's and
    pygame's windows crash the process on a machine without a display), and a value naming
    a file that is not a regular file (``xml_file`` naming a FIFO would wait forever inside
    MuJoCo's loader, ``/dev/zero`` would be read until memory ends) or is larger than
    ``ENV_FILE_LIMIT``. A path to nothing is left to the env to refuse."""
    import stat
    from spinup_tf.utils.safe_files import human_bytes
    if kwargs.get('render_mode') == 'human' and not has_display():
        raise UserInputError('%s: env_kwargs render_mode \'human\' opens a window, and this '
                             'machine has no display (DISPLAY is not set); remove it from '
                             'env_kwargs (test_policy renders by itself when it can, and '
                             'records videos with --video)' % env_id)
    for key, value in _path_values(kwargs):
        if not value or len(value) > 4096 or '\x00' in value or not os.path.lexists(value):
            continue
        try:
            st = os.stat(value)  # a link to a regular file is read through, as the env would
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            continue
        if not stat.S_ISREG(st.st_mode):
            from spinup_tf.utils.safe_files import _kind
            raise UserInputError('%s: env_kwargs %s names %s, which is %s; an env reads only '
                                 'regular files' % (env_id, key, value, _kind(st.st_mode)))
        if st.st_size > ENV_FILE_LIMIT:
            raise UserInputError('%s: env_kwargs %s names %s, which is %s, more than an env '
                                 'file can be (%s)' % (env_id, key, value,
                                                       human_bytes(st.st_size),
                                                       human_bytes(ENV_FILE_LIMIT)))


def make_env(env_id, **kwargs):
    """``gym.make`` with a clear error for unknown ids and missing extras, after
    :func:`check_env_kwargs`."""
    check_env_id(env_id)
    check_env_kwargs(env_id, kwargs)
    from spinup_tf.utils.atari import is_atari_id, make_atari
    if is_atari_id(env_id):  # the preprocessed game (spinup_tf.utils.atari)
        with c_output_silenced():  # ALE's banner, "[Powered by Stella]"
            return make_atari(env_id, **kwargs)
    if _is_mujoco_env(env_id):
        _route_mujoco_warnings()
    try:
        if _is_plugin_env(env_id):  # pybullet's banner on import, "argv[0]=" on reset
            with c_output_silenced():
                return QuietReset(gym.make(env_id, **kwargs))
        return gym.make(env_id, **kwargs)
    except gym.error.DependencyNotInstalled as e:
        raise UserInputError('environment %r needs an extra package: %s' % (env_id, e)) from None
    except ImportError as e:
        missing = getattr(e, 'name', None) or str(e)
        raise UserInputError('environment %r needs the Python package %r, which is not '
                             'installed here' % (env_id, missing)) from None


def make_checked_env(env_id, env_kwargs=None, probe=True):
    """``make_env(env_id, **env_kwargs)`` for a run that has not written anything yet: an id
    that is not a string, and keyword arguments the env refuses, are one ``UserInputError``.

    With ``probe`` the env is also reset and stepped once with a sampled action: some envs
    take any keyword and fail only then (Pendulum's ``g='abc'`` is a ``TypeError`` inside
    ``step``), and a run must not find that out after its ``config.json`` is written. The
    env is returned freshly made, so nothing of the probe shows.
    """
    env_kwargs = dict(env_kwargs or {})
    if not isinstance(env_id, str):
        raise UserInputError('the env id must be a gymnasium id (a string), got %r' % (env_id,))
    if not all(isinstance(k, str) for k in env_kwargs):
        raise UserInputError('env_kwargs must be keyword arguments (string keys), got %r'
                             % (env_kwargs,))
    described = ('%s with env_kwargs %r' % (env_id, env_kwargs)) if env_kwargs else env_id
    env = _made(env_id, env_kwargs, described)
    if not probe:
        return env
    try:
        env.action_space.seed(0)
        env.reset(seed=0)
        env.step(env.action_space.sample())
    except Exception as e:  # an env's own failure, in its own code: say it in one line
        raise UserInputError('%s fails when it is reset and stepped (%s: %s); fix --env_kwargs'
                             % (described, type(e).__name__, _first_line(e))) from None
    finally:
        env.close()
    return _made(env_id, env_kwargs, described)


def _made(env_id, env_kwargs, described):
    try:
        return make_env(env_id, **env_kwargs)
    except UserInputError:
        raise
    except Exception as e:  # TypeError, ValueError, AssertionError... from the env's __init__
        raise UserInputError('%s cannot be made (%s: %s)'
                             % (described, type(e).__name__, _first_line(e))) from None


def _first_line(e):
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else ''


def _is_mujoco_env(env_id):
    entry = getattr(gym.registry.get(env_id), 'entry_point', '')
    return isinstance(entry, str) and 'mujoco' in entry


def _route_mujoco_warnings():
    """MuJoCo's own warning handler prints to stdout and appends to ``MUJOCO_LOG.TXT`` in the
    working directory (every HalfCheetah-v5 made with MuJoCo 3.4 warns that gymnasium's
    model uses the deprecated ``settotalmass``). Route its warnings to one ``warning:`` line
    on stderr instead, and drop the deprecation notices about gymnasium's model files, which
    no user of the env can act on: nothing is written outside the run folder."""
    try:
        import mujoco
    except ImportError:
        return
    if mujoco.get_mju_user_warning() is None:
        mujoco.set_mju_user_warning(_mujoco_warning)


def _mujoco_warning(message):
    message = ' '.join(str(message).split())
    if 'is deprecated' not in message:
        print('warning: MuJoCo: %s' % message, file=sys.stderr)


_LIBC = []  # the C library, loaded once (a pybullet env resets every episode)


def _flush_c_streams():
    try:
        if not _LIBC:
            import ctypes
            _LIBC.append(ctypes.CDLL(None))
        _LIBC[0].fflush(None)
    except (OSError, AttributeError):
        pass


class QuietReset(gym.Wrapper):
    """An env whose ``reset`` (where pybullet connects and prints ``argv[0]=``) writes
    nothing to the terminal."""

    def reset(self, **kwargs):
        with c_output_silenced():
            return self.env.reset(**kwargs)


def _is_plugin_env(env_id):
    spec = gym.registry.get(env_id)
    entry = getattr(spec, 'entry_point', '')
    return isinstance(entry, str) and entry.split('.')[0] in ENV_PLUGINS


def env_id_of(env):
    """The gymnasium id of ``env`` (None for an env built without the registry)."""
    spec = getattr(env, 'spec', None)
    return spec.id if spec is not None else None


def is_image_space(space):
    """Whether ``space`` holds images: a uint8 ``Box`` of shape ``(H, W, C)`` or ``(C, H,
    W)``."""
    return isinstance(space, Box) and len(space.shape) == 3 and space.dtype == np.uint8


def observation_shape(space, algo, images=True):
    """The size of a flat ``Box`` observation (an int), or, with ``images``, the shape of
    an image one (a tuple, see :func:`is_image_space`); anything else is a
    ``UserInputError``."""
    if images and is_image_space(space):
        return tuple(int(n) for n in space.shape)
    if not isinstance(space, Box) or len(space.shape) != 1:
        raise UserInputError('%s needs a flat Box observation space (shape (n,))%s, got %s'
                             % (algo, ' or uint8 images (H, W, C) or (C, H, W)' if images
                                else '', space))
    return int(space.shape[0])


def flat_obs_dim(space, algo):
    """Size of a flat ``Box`` observation space; anything else is a ``UserInputError``."""
    if not isinstance(space, Box) or len(space.shape) != 1:
        raise UserInputError('%s needs a flat Box observation space (shape (n,)), got %s'
                             % (algo, space))
    return int(space.shape[0])


def box_action_bounds(space, algo):
    """``(low, high)`` float32 arrays of a bounded, flat ``Box`` action space.

    Deterministic-policy algorithms squash their output with ``tanh`` and map ``[-1, 1]``
    onto ``[low, high]`` per dimension, so every dimension must be finite.
    """
    if not isinstance(space, Box):
        raise UserInputError('%s needs a continuous (Box) action space, got %s' % (algo, space))
    if len(space.shape) != 1:
        raise UserInputError('%s needs a flat Box action space (shape (n,)), got shape %s'
                             % (algo, space.shape))
    low = np.asarray(space.low, dtype=np.float32)
    high = np.asarray(space.high, dtype=np.float32)
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        raise UserInputError('%s needs a bounded action space; got low=%s high=%s'
                             % (algo, low, high))
    if np.any(high <= low):
        raise UserInputError('action space has an empty dimension: low=%s high=%s' % (low, high))
    return low, high


def off_policy_actions(space, algo):
    """What an off-policy loop needs of an action space: ``(discrete, act_dim, low, high)``.
    ``Discrete``: actions are stored and fed one-hot, so ``act_dim`` is their number and the
    bounds are None. A bounded ``Box``: ``act_dim`` is its size and the bounds are
    :func:`box_action_bounds`'s ``(act_dim,)`` float32 arrays."""
    if isinstance(space, Discrete):
        return True, int(space.n), None, None
    low, high = box_action_bounds(space, algo)
    return False, low.shape[0], low, high


def check_action_space(space, algo, kinds=('box',)):
    """For off-policy algorithms: ``space`` is one of ``kinds`` (``'box'``: a bounded flat
    ``Box``, see :func:`box_action_bounds`; ``'discrete'``: a ``Discrete`` space)."""
    if 'discrete' in kinds and isinstance(space, Discrete):
        return
    if 'box' in kinds and (isinstance(space, Box) or kinds == ('box',)):
        box_action_bounds(space, algo)
        return
    wanted = ' or '.join({'box': 'a continuous (Box)', 'discrete': 'a Discrete'}[k]
                         for k in kinds)
    raise UserInputError('%s needs %s action space, got %s' % (algo, wanted, space))


def check_discrete_or_box(space, algo):
    """For stochastic-policy algorithms: a ``Discrete`` or flat bounded-or-not ``Box``."""
    if isinstance(space, Discrete):
        return
    if isinstance(space, Box) and len(space.shape) == 1:
        return
    raise UserInputError('%s handles Discrete or flat Box action spaces, got %s' % (algo, space))


def seed_env(env, seed):
    """Seed an env's first reset and its action space; returns the first observation."""
    env.action_space.seed(seed)
    o, _ = env.reset(seed=seed)
    return o
