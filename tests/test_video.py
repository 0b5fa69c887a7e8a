"""Videos of a policy (spinup_tf.utils.video): ``test_policy --video`` and the udemy preset's
videos, headless, for classic-control, MuJoCo and pybullet envs. Each video is decoded and
its frames counted: the reset frame and one per step."""
import os

import numpy as np
import pytest

from conftest import run_cli
from spinup_tf.utils.video import record_episodes, video_paths



def _frames(path):
    import imageio
    reader = imageio.get_reader(str(path))
    try:
        frames = [f for f in reader]
        return frames, reader.get_meta_data()['fps']
    finally:
        reader.close()


def _headless():
    env = {k: v for k, v in os.environ.items() if k not in ('DISPLAY', 'WAYLAND_DISPLAY',
                                                            'MUJOCO_GL')}
    return dict(env, TF_CPP_MIN_LOG_LEVEL='3')


def _cli(*args):
    return run_cli(*args, env=_headless(), timeout=300)


def test_video_paths():
    assert video_paths('a/b.mp4', 1) == ['a/b.mp4']
    assert video_paths('a/b.mp4', 2) == ['a/b-episode-0.mp4', 'a/b-episode-1.mp4']
    assert video_paths('v', 2) == [os.path.join('v', 'episode-0.mp4'),
                                   os.path.join('v', 'episode-1.mp4')]


@pytest.mark.parametrize('env_id,act_dim,steps', [('InvertedPendulum-v5', 1, 12),
                                                  ('AntBulletEnv-v0', 8, 7)])
def test_mujoco_and_pybullet_render_headless(monkeypatch, tmp_path, env_id, act_dim, steps):
    """MuJoCo through EGL (MUJOCO_GL chosen here) and pybullet's TinyRenderer, without a
    display, in a process that has TensorFlow loaded (the env renders in a child)."""
    import spinup_tf.utils.tf1  # noqa: F401  (TensorFlow in this process, as in test_policy)
    for key in ('DISPLAY', 'WAYLAND_DISPLAY', 'MUJOCO_GL'):
        monkeypatch.delenv(key, raising=False)
    out = tmp_path / 'v.mp4'
    results = record_episodes(env_id, {}, lambda o: np.zeros(act_dim), str(out),
                              max_ep_len=steps)
    assert results == [(str(out), pytest.approx(results[0][1]), steps)]
    frames, _ = _frames(out)
    assert len(frames) == steps + 1
    assert frames[0].ndim == 3 and frames[0].std() > 1  # a picture, not a blank frame
    assert os.listdir(tmp_path) == ['v.mp4']  # no staging folder left


def test_videos_option_then_test_policy_video_file_and_folder(tmp_path):
    """``videos=1`` (the udemy preset's) writes <run>/videos/episode-0.mp4 of the final
    policy once training ends: Pendulum's 200-step episode, 201 frames at its 30 fps. Then
    ``test_policy DIR --video OUT.mp4``: one episode, EpLen + 1 frames; ``--video FOLDER
    -n 2``: episode-0.mp4 and episode-1.mp4."""
    r = _cli('td3', '--env', 'Pendulum-v1', '--epochs', '1', '--steps_per_epoch', '300',
             '--start_steps', '100', '--update_after', '100', '--num_test_episodes', '1',
             '--hid', '[16]', '--videos', '1', '--data_dir', str(tmp_path), '--exp_name', 'pv')
    assert r.returncode == 0, r.stderr
    run_dir = tmp_path / 'pv' / 'pv_s0'
    frames, fps = _frames(run_dir / 'videos' / 'episode-0.mp4')
    assert len(frames) == 201 and fps == 30
    r = _cli('test_policy', str(run_dir), '--video', str(tmp_path / 'out.mp4'), '--len', '15')
    assert r.returncode == 0, r.stderr
    assert 'EpLen 15' in r.stdout
    assert len(_frames(tmp_path / 'out.mp4')[0]) == 16
    r = _cli('test_policy', str(run_dir), '--video', str(tmp_path / 'vids'), '-n', '2',
             '--len', '6')
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / 'vids')) == ['episode-0.mp4', 'episode-1.mp4']
    assert all(len(_frames(tmp_path / 'vids' / f)[0]) == 7
               for f in ('episode-0.mp4', 'episode-1.mp4'))


def test_a_renderer_that_cannot_start_is_one_error_and_writes_nothing(monkeypatch, tmp_path):
    from spinup_tf.utils.errors import UserInputError
    monkeypatch.setenv('SDL_VIDEODRIVER', 'nosuchdriver')  # pygame cannot open a surface
    with pytest.raises(UserInputError, match='could not render a frame'):
        record_episodes('CartPole-v1', {}, lambda o: 0, str(tmp_path / 'bad' / 'x.mp4'))
    assert os.listdir(tmp_path / 'bad') == []
