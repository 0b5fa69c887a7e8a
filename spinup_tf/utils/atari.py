"""Atari games as the DQN literature plays them (Mnih et al. 2015; Machado et al. 2018), on
gymnasium's own wrappers and ale-py (whose wheels ship the ROMs).

:func:`make_atari` gives the env that tests and records videos: no-op starts (up to 30),
a frame skip of 4 (the max of the last two frames), 84x84 grey frames, a stack of the last
4 frames (observations ``(4, 84, 84)`` uint8), whole games, the game's own score.
:func:`training_wrappers` adds what only the learner sees: a lost life ends its episode
(without resetting the game), FIRE starts the game where it must, and rewards are clipped
to their sign, with the game's reward kept in ``info['raw_reward']`` (the loop's ``EpRet``
sums those).

``ALE/<Game>-v5`` keeps its sticky actions (probability 0.25, Machado et al.); the
``<Game>NoFrameskip-v4`` ids have none, as in the Nature paper and SB3's Atari benchmark.
"""
import numpy as np
import gymnasium as gym

from spinup_tf.utils.errors import UserInputError

FRAME_SKIP, SCREEN_SIZE, FRAME_STACK, NOOP_MAX = 4, 84, 4, 30


def is_atari_id(env_id):
    """Whether ``env_id`` names an ALE game (``ALE/Pong-v5``, ``PongNoFrameskip-v4``)."""
    if not isinstance(env_id, str):
        return False
    if env_id.startswith('ALE/'):
        return True
    if env_id not in gym.registry and 'NoFrameskip' in env_id:
        try:
            import ale_py  # noqa: F401  (registers the games' ids)
        except ImportError:
            return False
    spec = gym.registry.get(env_id)
    entry = getattr(spec, 'entry_point', '')
    return isinstance(entry, str) and entry.startswith('ale_py')


def register_ale():
    """Register ale-py's envs with gymnasium (a ``UserInputError`` when it is missing)."""
    try:
        import ale_py
    except ImportError:
        raise UserInputError('Atari games need the ale-py package: pip install -r '
                             'requirements.txt') from None
    gym.register_envs(ale_py)


def make_atari(env_id, **kwargs):
    """The preprocessed game: no-op starts, frame skip 4, 84x84 grey, 4 stacked frames."""
    register_ale()
    kwargs.setdefault('frameskip', 1)  # the skipping (with max-pooling) is the wrapper's
    env = gym.make(env_id, **kwargs)
    env = gym.wrappers.AtariPreprocessing(env, noop_max=NOOP_MAX, frame_skip=FRAME_SKIP,
                                          screen_size=SCREEN_SIZE, grayscale_obs=True)
    return gym.wrappers.FrameStackObservation(env, FRAME_STACK)


def training_wrappers(env):
    """``env`` (from :func:`make_atari`) as the learner plays it: episodic lives, FIRE at
    the start where the game needs it, rewards clipped to their sign."""
    env = EpisodicLife(env)
    if 'FIRE' in env.unwrapped.get_action_meanings():
        env = FireReset(env)
    return ClipReward(env)


class EpisodicLife(gym.Wrapper):
    """A lost life is a terminal state for the learner, but the game goes on: ``reset``
    after a lost life takes one no-op step instead of resetting the game (SB3's
    ``EpisodicLifeEnv``). A game that is over resets as usual."""

    def __init__(self, env):
        super().__init__(env)
        self.lives, self.game_over = 0, True

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.game_over = terminated or truncated
        lives = self.env.unwrapped.ale.lives()
        if 0 < lives < self.lives:
            terminated = True
        self.lives = lives
        return obs, reward, terminated, truncated, info

    def reset(self, **kwargs):
        if self.game_over:
            obs, info = self.env.reset(**kwargs)
        else:
            obs, _, terminated, truncated, info = self.env.step(0)
            if terminated or truncated:
                obs, info = self.env.reset(**kwargs)
        self.lives = self.env.unwrapped.ale.lives()
        return obs, info


class FireReset(gym.Wrapper):
    """Press FIRE after each reset (games such as Breakout wait for it)."""

    def reset(self, **kwargs):
        self.env.reset(**kwargs)
        obs, _, terminated, truncated, info = self.env.step(1)
        if terminated or truncated:
            obs, info = self.env.reset(**kwargs)
        return obs, info


class ClipReward(gym.Wrapper):
    """Rewards clipped to -1, 0 or 1 (their sign); the game's in ``info['raw_reward']``."""

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = dict(info, raw_reward=float(reward))
        return obs, float(np.sign(reward)), terminated, truncated, info


def is_atari_env(env):
    """Whether ``env`` is a game made by :func:`make_atari` (wrapped or not)."""
    while isinstance(env, gym.Wrapper):
        if isinstance(env, gym.wrappers.AtariPreprocessing):
            return True
        env = env.env
    return False
