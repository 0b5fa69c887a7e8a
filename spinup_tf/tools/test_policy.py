"""Load a saved policy from a run folder and run it: ``python run.py test_policy DIR``.

The run folder must hold ``config.json`` and ``tf1_save/``. The policy is rebuilt from this
project's code and the folder's ``config.json``, and only variable values are read from
``tf1_save/`` (``spinup_tf.saving.policy``): no graph stored in the folder ever runs, so a
downloaded folder is safe to test. Episodes are capped at the run's ``max_ep_len`` unless
``--len`` says otherwise. ``--video OUT.mp4`` (or a folder) records the episodes instead of
showing them (``spinup_tf.utils.video``; headless).

Refused with one ``error:`` line: an ``env_kwargs`` ``render_mode='human'`` on a machine with
no display (it would crash the env), weights that are not finite numbers (every action would
be NaN), and every kind of damaged or hostile model (``spinup_tf.saving.policy``). For a
folder from elsewhere run it as ``spinup-tf test_policy DIR`` or ``python -P -m spinup_tf
test_policy DIR``, not ``python -m spinup_tf`` from inside the folder.
"""
import argparse
import os
import sys

import numpy as np

from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.envs import make_checked_env
from spinup_tf.saving.policy import (load_env_spec, load_policy, load_run_config,  # noqa: F401
                                     run_max_ep_len)


def load_env_id(fpath):
    """The env id recorded in ``fpath/config.json``."""
    return load_env_spec(fpath)[0]


def run_policy(env, get_action, max_ep_len=None, num_episodes=10, seed=None):
    """Run ``num_episodes`` episodes; print and return ``(returns, lengths)``.

    An env made with ``render_mode='human'`` renders itself at every step.
    """
    returns, lengths = [], []
    o, _ = env.reset(seed=seed)
    ep_ret, ep_len, n = 0.0, 0, 0
    while n < num_episodes:
        o, r, terminated, truncated, _ = env.step(get_action(o))
        ep_ret += r
        ep_len += 1
        if terminated or truncated or (max_ep_len and ep_len >= max_ep_len):
            print('Episode %d \t EpRet %.3f \t EpLen %d' % (n, ep_ret, ep_len))
            returns.append(ep_ret)
            lengths.append(ep_len)
            n += 1
            if n < num_episodes:
                o, _ = env.reset()
            ep_ret, ep_len = 0.0, 0
    print('Mean EpRet %.3f \t Mean EpLen %.1f' % (np.mean(returns), np.mean(lengths)))
    return returns, lengths


def record_videos(env_id, env_kwargs, get_action, out, episodes=1, max_ep_len=0, seed=0):
    """Record ``episodes`` episodes of ``get_action`` on ``env_id`` to ``out`` (an ``.mp4``
    file or a folder; see ``spinup_tf.utils.video``), printing one line per video."""
    from spinup_tf.utils.video import record_episodes
    results = record_episodes(env_id, env_kwargs, get_action, out, episodes, max_ep_len, seed)
    for path, ep_ret, ep_len in results:
        print('Video %s \t EpRet %.3f \t EpLen %d' % (path, ep_ret, ep_len))
    return results


def check_video_paths(run_dir, out, episodes):
    """``UserInputError`` when a video would be written through a link: a symbolic link or a
    FIFO at one of the files, or (for an output inside the run folder, which may come from
    anyone) a symbolic link on the way from the run folder to it."""
    import os.path as osp
    from spinup_tf.utils.safe_files import check_components, check_replaceable
    from spinup_tf.utils.video import video_paths
    paths = video_paths(out, episodes)
    run_dir, folder = osp.abspath(run_dir), osp.abspath(osp.dirname(paths[0]) or '.')
    if folder == run_dir or folder.startswith(run_dir + os.sep):
        check_components(run_dir, folder, what='video folder')
    for path in paths:
        check_replaceable(path)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='run.py test_policy', description=__doc__)
    parser.add_argument('fpath', help='run folder holding config.json and tf1_save/')
    parser.add_argument('--len', '-l', type=int, default=None,
                        help="max episode length (default: the run's max_ep_len; 0: the "
                             "env's own limit)")
    parser.add_argument('--episodes', '-n', type=int, default=None,
                        help='episodes to run (default 10; 1 with --video)')
    parser.add_argument('--norender', '-nr', action='store_true')
    parser.add_argument('--itr', '-i', type=int, default=None)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--best', action='store_true',
                        help='load tf1_save_best/ (the best mean deterministic test return)')
    parser.add_argument('--video', metavar='OUT', default=None,
                        help='record the episodes to OUT.mp4 (several: OUT-episode-<i>.mp4) '
                             'or to OUT/episode-<i>.mp4, without a display')
    args = parser.parse_args(argv)
    if args.episodes is None:
        args.episodes = 1 if args.video else 10
    if args.best and args.itr is not None:
        raise UserInputError('--best and --itr choose different models: give one')
    if args.episodes <= 0:
        raise UserInputError('--episodes must be positive')
    if args.len is not None and args.len < 0:
        raise UserInputError('--len must be 0 (the env\'s own limit) or a positive number of '
                             'steps, got %d' % args.len)
    if args.video:
        check_video_paths(args.fpath, args.video, args.episodes)
    get_action, sess = load_policy(args.fpath, args.itr, best=args.best)
    try:
        config = load_run_config(args.fpath)
        if args.len is None:  # the run's cap: an env that never ends still ends here
            args.len = run_max_ep_len(args.fpath, config) or 0
        env_id, env_kwargs = load_env_spec(args.fpath, config)
    except BaseException:
        sess.close()
        raise
    if args.video:
        try:
            record_videos(env_id, env_kwargs, get_action, args.video, args.episodes,
                          args.len, args.seed)
        finally:
            sess.close()
        return 0
    render = not args.norender
    if render and not (os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY')):
        print('warning: no display; running without rendering', file=sys.stderr)
        render = False
    try:
        env = make_checked_env(env_id, dict(env_kwargs, render_mode='human') if render
                               else env_kwargs, probe=False)
    except BaseException:
        sess.close()
        raise
    try:
        run_policy(env, get_action, args.len, args.episodes, seed=args.seed)
    except (UserInputError, KeyboardInterrupt):
        raise
    except Exception as e:  # the env's own code failed while it ran (its kwargs, its state)
        raise UserInputError('%s failed while the policy ran (%s: %s)'
                             % (env_id, type(e).__name__, str(e).splitlines()[0][:200]
                                if str(e) else '')) from None
    finally:
        env.close()
        sess.close()
    return 0
