"""Load a saved policy from a run folder and run it: ``python run.py test_policy DIR``.

The run folder must hold ``config.json`` (with the env id) and ``tf1_save/`` (a SavedModel
with ``model_info.json``). Nothing is unpickled. ``--video OUT.mp4`` (or a folder) records the
episodes instead of showing them (``spinup_tf.utils.video``; headless).
"""
import argparse
import json
import os
import os.path as osp
import sys

import numpy as np

from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.envs import make_env
from spinup_tf.utils.logx import CONFIG_FILE, MODEL_DIR, MODEL_INFO_FILE


def load_policy(fpath, itr=None, deterministic=True, best=False):
    """Load the policy saved in run folder ``fpath``.

    Args:
        fpath (str): the run folder (the one holding ``tf1_save/``).
        itr (int): load ``tf1_save{itr}`` instead of the last save.
        deterministic (bool): use ``mu`` rather than the sampled ``pi`` when the model has it.
        best (bool): load ``tf1_save_best/``, the model of the epoch with the best mean
            deterministic test return.

    Returns:
        ``(get_action, sess)`` where ``get_action(o)`` maps an observation ``(obs_dim,)`` to an
        action.
    """
    from spinup_tf.utils.tf1 import tf
    model_dir = osp.join(fpath, MODEL_DIR + ('%d' % itr if itr is not None else '')
                         + ('_best' if best else ''))
    info_path = osp.join(model_dir, MODEL_INFO_FILE)
    if not osp.isdir(model_dir):
        raise UserInputError('no saved model in %s (expected folder %s)' % (fpath, model_dir))
    try:
        with open(info_path) as f:
            info = json.load(f)
        inputs, outputs = info['inputs'], info['outputs']
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UserInputError('the model in %s is unreadable (%s: %s)'
                             % (model_dir, type(e).__name__, e)) from None
    graph = tf.Graph()
    sess = tf.Session(graph=graph)
    try:
        with graph.as_default():
            tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], model_dir)
            x = graph.get_tensor_by_name(inputs['x'])
            name = 'mu' if deterministic and 'mu' in outputs else 'pi'
            action = graph.get_tensor_by_name(outputs[name])
    except Exception as e:  # a corrupted SavedModel can fail in many ways inside TF
        sess.close()
        raise UserInputError('the model in %s could not be loaded (%s: %s)'
                             % (model_dir, type(e).__name__, str(e).splitlines()[0]
                                if str(e) else '')) from None
    act_fn = sess.make_callable(action, feed_list=[x])
    from spinup_tf.loops.normalize import observation_normalizer
    normalize = observation_normalizer(info)  # --normalize_obs: the statistics saved with it

    def get_action(o):
        return act_fn(np.asarray(normalize(o), dtype=np.float32).reshape(1, -1))[0]
    return get_action, sess


def load_env_id(fpath):
    """The env id recorded in ``fpath/config.json``."""
    return load_env_spec(fpath)[0]


def load_env_spec(fpath):
    """``(env_id, env_kwargs)`` recorded in ``fpath/config.json`` (``env_kwargs``: the
    ``--env_kwargs`` of the run, ``{}`` when none)."""
    path = osp.join(fpath, CONFIG_FILE)
    try:
        with open(path) as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise UserInputError('cannot read %s (%s)' % (path, e)) from None
    env_id = config.get('env_id') if isinstance(config, dict) else None
    if not env_id:
        raise UserInputError('%s does not record an env id' % path)
    env_fn = config.get('env_fn')
    env_kwargs = env_fn.get('env_kwargs') if isinstance(env_fn, dict) else None
    return env_id, dict(env_kwargs) if isinstance(env_kwargs, dict) else {}


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


def main(argv=None):
    parser = argparse.ArgumentParser(prog='run.py test_policy', description=__doc__)
    parser.add_argument('fpath', help='run folder holding config.json and tf1_save/')
    parser.add_argument('--len', '-l', type=int, default=0, help='max episode length (0: env)')
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
    if args.len < 0:
        raise UserInputError('--len must be 0 (the env\'s own limit) or a positive number of '
                             'steps, got %d' % args.len)
    if not osp.isdir(args.fpath):
        raise UserInputError('no such run folder: %s' % args.fpath)
    get_action, sess = load_policy(args.fpath, args.itr, best=args.best)
    env_id, env_kwargs = load_env_spec(args.fpath)
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
    env = make_env(env_id, **dict(env_kwargs, render_mode='human')) if render else \
        make_env(env_id, **env_kwargs)
    try:
        run_policy(env, get_action, args.len, args.episodes, seed=args.seed)
    finally:
        env.close()
        sess.close()
    return 0
