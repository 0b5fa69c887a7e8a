"""Videos of a saved policy: deterministic episodes recorded with gymnasium's ``RecordVideo``.

``python run.py test_policy DIR --video OUT.mp4`` (or ``--video FOLDER``) uses it, and so does
the udemy preset (``videos=1``), which writes ``<run>/videos/episode-0.mp4`` of the final
policy once training ends, as the seed's ``wrappers.Monitor`` filled its ``monitor`` folder.

The env is made with ``render_mode="rgb_array"``; each episode becomes one MP4 (H.264,
yuv420p) of ``EpLen + 1`` frames: the reset frame and one per step, at the env's
``render_fps``. ``RecordVideo`` captures the frames; :class:`EpisodeVideo` writes them with
``imageio-ffmpeg`` (moviepy's writer, which ``RecordVideo`` uses, drops the last frame of
some lengths: 201 frames at 60 fps come out as 200).

The env runs in a child process that never imports TensorFlow (:class:`RenderedEnv`): Mesa's
software OpenGL and TensorFlow's libraries crash one process that loads both (a segfault
on the first MuJoCo frame, or at exit). The policy acts in this process. Rendering needs no
display:

* MuJoCo renders through ``MUJOCO_GL``; without a display it is set to ``egl`` (Mesa's EGL,
  software rendering on a machine without a GPU; Debian package ``libegl-mesa0``) unless the
  user chose one (``osmesa`` works too, with ``libosmesa6``).
* pybullet renders with its CPU TinyRenderer; classic control with pygame, whose SDL video
  driver is set to ``dummy`` without a display.
"""
import multiprocessing
import os
import os.path as osp
import shutil
import tempfile

import numpy as np

from spinup_tf.utils.errors import UserInputError

VIDEO_SUFFIX = '.mp4'
RENDER_HINT = ('for MuJoCo without a display set MUJOCO_GL=egl (Debian libegl-mesa0) or '
               'osmesa (libosmesa6)')


def use_headless_rendering(environ=None):
    """Without a display, choose renderers that need none (see the module docstring); a
    value the user set is kept. Call it before the first frame is rendered."""
    environ = os.environ if environ is None else environ
    if environ.get('DISPLAY') or environ.get('WAYLAND_DISPLAY'):
        return
    environ.setdefault('MUJOCO_GL', 'egl')
    environ.setdefault('SDL_VIDEODRIVER', 'dummy')


def video_paths(out, episodes):
    """The MP4 files ``out`` names for ``episodes`` episodes: ``out`` itself for one episode
    when it ends in ``.mp4`` (``OUT-episode-<i>.mp4`` for several), else
    ``out/episode-<i>.mp4``."""
    if out.endswith(VIDEO_SUFFIX):
        if episodes == 1:
            return [out]
        stem = out[:-len(VIDEO_SUFFIX)]
        return ['%s-episode-%d%s' % (stem, i, VIDEO_SUFFIX) for i in range(episodes)]
    return [osp.join(out, 'episode-%d%s' % (i, VIDEO_SUFFIX)) for i in range(episodes)]


def record_episodes(env_id, env_kwargs, get_action, out, episodes=1, max_ep_len=None, seed=0):
    """Record ``episodes`` episodes of ``get_action(o)`` on ``env_id`` to the files of
    :func:`video_paths` and return ``[(path, episode return, episode length)]``.

    Args:
        env_id (str), env_kwargs (dict): the env, as ``gym.make(env_id, **env_kwargs)``.
        get_action: ``(obs_dim,)`` observation to action (the deterministic policy).
        out (str): an ``.mp4`` file or a folder (made if missing).
        episodes (int): how many; each starts from ``env.reset`` (the first with ``seed``).
        max_ep_len (int): cut episodes at this many steps (None or 0: the env's own limit).

    The videos appear whole or not at all: they are written to a hidden folder next to
    them and moved into place once every episode is recorded.
    """
    paths = video_paths(out, episodes)
    folder = osp.dirname(paths[0]) or '.'
    os.makedirs(folder, exist_ok=True)
    staging = tempfile.mkdtemp(prefix='.video-', dir=folder)
    recorded = osp.join(staging, 'episodes')
    env = RenderedEnv(env_id, env_kwargs, recorded)
    try:
        results = []
        o = env.reset(seed)
        for i in range(episodes):
            ep_ret, ep_len, done = 0.0, 0, False
            while not done:
                o, r, terminated, truncated = env.step(get_action(o))
                ep_ret += float(r)
                ep_len += 1
                done = terminated or truncated or bool(max_ep_len and ep_len >= max_ep_len)
            results.append((paths[i], ep_ret, ep_len))
            if i + 1 < episodes:
                o = env.reset()
        env.close()  # writes the last episode's video
        for i, (path, _, _) in enumerate(results):
            os.replace(osp.join(recorded, 'video-episode-%d%s' % (i, VIDEO_SUFFIX)), path)
        return results
    finally:
        env.close()
        shutil.rmtree(staging, ignore_errors=True)


class RenderedEnv:
    """An env recording every episode to ``folder`` (``video-episode-<i>.mp4``), run in a
    child process started with ``spawn`` (no TensorFlow in it), stepped through a pipe.

    ``reset(seed=None)`` returns the observation, ``step(action)`` ``(obs, reward,
    terminated, truncated)``; ``close()`` writes the open episode's video and ends the child.
    An error in the child (an unknown env, a renderer that cannot start) is raised here as a
    ``UserInputError`` with its message.
    """

    def __init__(self, env_id, env_kwargs, folder):
        ctx = multiprocessing.get_context('spawn')
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, env_id, dict(env_kwargs), folder),
                                daemon=True)
        self.proc.start()
        child.close()
        self._call('ready')

    def reset(self, seed=None):
        return self._call('reset', seed)

    def step(self, action):
        return self._call('step', np.asarray(action))

    def close(self):
        proc = self.proc
        if proc is None:
            return
        try:
            self._call('close')
        finally:
            self.conn.close()
            proc.join(timeout=30)
            if proc.is_alive():
                proc.kill()
            self.proc = None

    def _call(self, command, arg=None):
        try:
            if command != 'ready':
                self.conn.send((command, arg))
            kind, value = self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            self.proc.join(timeout=5)
            code = self.proc.exitcode
            self.proc = None
            raise UserInputError('the process rendering the env died (exit code %s); %s'
                                 % (code, RENDER_HINT)) from None
        if kind == 'error':
            self.conn.close()
            self.proc.join(timeout=30)
            self.proc = None
            raise UserInputError(value)
        return value


VIDEO_SEED_OFFSET = 20000  # a run's videos' episodes differ from its training and test ones


def record_run_videos(run, act):
    """At the end of a run (``--videos N``): ``N`` deterministic episodes of ``act(o)``, its
    final policy, recorded to ``<run>/videos/episode-<i>.mp4`` on fresh envs
    (``render_mode='rgb_array'``), with the observations normalised as in training.

    Args:
        run: the loop's ``Run`` (its ``logger``, ``env``, ``setup.env_kwargs``, ``p``,
            ``options``).
        act: ``(obs_dim,)`` observation to action.
    """
    from spinup_tf.utils.normalize import observation_normalizer, MODEL_KEY
    stats = run.logger.model_extras.get(MODEL_KEY)
    normalize = observation_normalizer({MODEL_KEY: stats.state_dict()} if stats else {})
    out = osp.join(run.logger.output_dir, 'videos')
    results = record_episodes(run.env.spec.id, run.setup.env_kwargs, lambda o: act(normalize(o)),
                              out, run.options.videos, run.p.max_ep_len,
                              run.p.seed + VIDEO_SEED_OFFSET)
    for path, ep_ret, ep_len in results:
        print('Video %s \t EpRet %.3f \t EpLen %d' % (path, ep_ret, ep_len))


def _serve(conn, env_id, env_kwargs, folder):
    """The child of :class:`RenderedEnv`: make the env and answer its commands."""
    use_headless_rendering()
    try:
        from gymnasium.error import DependencyNotInstalled
        from spinup_tf.utils.envs import make_env
        env = make_env(env_id, **dict(env_kwargs, render_mode='rgb_array'))
        try:
            env = _recorder_class()(env, folder, episode_trigger=lambda episode: True,
                                    name_prefix='video', disable_logger=True)
        except DependencyNotInstalled as e:
            raise UserInputError('recording a video needs moviepy (pip install -r '
                                 'requirements.txt): %s' % e) from None
        conn.send(('ok', None))
        while True:
            command, arg = conn.recv()
            if command == 'reset':
                o, _ = _first_frame(env, arg)
                conn.send(('ok', o))
            elif command == 'step':
                o, r, terminated, truncated, _ = env.step(arg)
                conn.send(('ok', (o, float(r), bool(terminated), bool(truncated))))
            elif command == 'close':
                env.close()
                conn.send(('ok', None))
                return
    except UserInputError as e:
        conn.send(('error', str(e)))
    except Exception as e:  # the parent turns it into one error line
        conn.send(('error', 'recording %s failed (%s: %s)'
                   % (env_id, type(e).__name__, str(e).splitlines()[0] if str(e) else '')))


def _first_frame(env, seed):
    """``env.reset(seed=seed)``, which renders the episode's first frame; a renderer that
    cannot start fails there, in many ways."""
    try:
        out = env.reset(seed=seed)
    except Exception as e:
        raise UserInputError('the env could not render a frame (%s: %s); %s'
                             % (type(e).__name__, str(e).splitlines()[0] if str(e) else '',
                                RENDER_HINT)) from None
    if not env.recorded_frames:
        raise UserInputError('the env rendered no frame with render_mode="rgb_array"; '
                             + RENDER_HINT)
    return out


def _recorder_class():
    from gymnasium.wrappers import RecordVideo

    class EpisodeVideo(RecordVideo):
        """``RecordVideo`` that writes every captured frame (see the module docstring)."""

        def stop_recording(self):
            if self.recorded_frames:
                write_mp4(osp.join(self.video_folder, self._video_name + VIDEO_SUFFIX),
                          self.recorded_frames, self.frames_per_sec)
            self.recorded_frames = []
            self.recording = False
            self._video_name = None

    return EpisodeVideo


def write_mp4(path, frames, fps):
    """Write ``frames`` (each ``(height, width, 3)`` uint8) to ``path`` as H.264 at ``fps``;
    odd sizes are padded by one pixel (yuv420p needs even ones)."""
    import imageio_ffmpeg
    height, width = frames[0].shape[:2]
    writer = imageio_ffmpeg.write_frames(
        path, (width, height), fps=fps, codec='libx264', pix_fmt_out='yuv420p',
        macro_block_size=1, output_params=['-vf', 'pad=ceil(iw/2)*2:ceil(ih/2)*2'],
        ffmpeg_log_level='error')
    writer.send(None)  # start ffmpeg
    try:
        for frame in frames:
            writer.send(np.ascontiguousarray(frame, dtype=np.uint8))
    finally:
        writer.close()
