"""DQN against Stable-Baselines3's DQN at rl-baselines3-zoo's hyperparameters, with discrete
SAC and PPO beside them, on the classic discrete-action envs.

    python plots/dqn_vs_sb3.py [--envs CartPole-v1 ...] [--seeds 3] [--only ours sb3 sac ppo]
    python plots/dqn_vs_sb3.py --no-run        # only the table and the figures

Every run writes a tab-separated ``progress.txt`` in
``plots/dqn_sb3/data/<who>/<env>/run/run_s<seed>/`` (ours: ``run.py``'s own run folder; SB3:
this script's ``sb3-run`` child, which logs the same columns). At each epoch's end both test
the greedy policy on 10 episodes of a separate env (``AverageTestEpRet``). A finished run (its
steps reached) is skipped, so the script can be stopped and started again. The runs alternate
ours and SB3 per (env, seed), in one session, one at a time, so their env steps/s are measured
under the same load.

Then ``plots/dqn_sb3/RESULTS.md``: per env, each agent's final test return (mean ± std over
seeds) and the mean of its last three evaluations, the ratio ours / SB3, and env steps/s
(steps over the whole run's wall time, tests included; Atari: the median epoch's, see
``steps_per_second``); and one figure per env.

Atari (``PongNoFrameskip-v4``): zoo's Atari settings at 1M agent steps, 2 seeds, 3 whole
games per evaluation on the game's own score. Both libraries play the same env,
``spinup_tf.utils.atari``'s preprocessing and training wrappers, SB3 with its ``CnnPolicy``
(the Nature network, as ours). A run takes hours here, so it must survive the end of a
session: ours continues through ``run.py resume`` (exact), SB3's from the model and replay
buffer it saves at each evaluation and on SIGTERM or SIGINT (not step-for-step the
uninterrupted run). Stop the runs with SIGTERM, not SIGKILL; the checkpoints are gitignored
(SB3's buffer alone is 5.6 GB), so ``--out`` a folder outside the checkout keeps them on a
machine that is kept. To run the two libraries side by side, start one script per library
(``--only ours``, ``--only sb3``); runs not finished are listed below the table.

SB3 runs with one PyTorch thread, as our TF session has one intra-op thread (on this 2-core
machine torch's default of a thread per core made its updates several times slower under
load). SB3 (and PyTorch) are needed only here: ``pip install stable-baselines3``; they are not
dependencies of spinup_tf.
"""
import argparse
import os
import os.path as osp
import shutil
import signal
import subprocess
import sys
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, ROOT)
from spinup_tf.tools.env_defaults import (  # noqa: E402  (no TensorFlow)
    ATARI_DEFAULTS, ATARI_STEPS, ZOO_DQN, zoo_dqn_kwargs)
from spinup_tf.utils.atari import is_atari_id, make_atari, training_wrappers  # noqa: E402
OUT = osp.join(ROOT, 'plots', 'dqn_sb3')
EVAL_EPISODES = 10

# rl-baselines3-zoo's hyperparams/dqn.yml, from the one table that also holds run.py dqn's
# per-env defaults (env_defaults.ZOO_DQN): SB3 gets each entry as it stands (its keys are
# SB3's DQN arguments), ours the same entry through env_defaults.zoo_dqn_kwargs, so the two
# run the same settings, and ours runs the values a user's `run.py dqn --env ENV` gets.
ZOO = {env_id: dict(ZOO_DQN[env_id])
       for env_id in ('CartPole-v1', 'Acrobot-v1', 'LunarLander-v3', 'MountainCar-v0')}
# The zoo's Atari entry (CnnPolicy, 10M steps) at 1M agent steps (env_defaults.ATARI_STEPS,
# run.py dqn's Atari budget); exploration_fraction stays 0.1 of the run (so epsilon reaches
# 0.01 at 100k steps here, at 1M in zoo's). Both sides play the same env:
# spinup_tf.utils.atari's preprocessing and training wrappers.
ZOO['PongNoFrameskip-v4'] = dict(ZOO_DQN['atari'], n_timesteps=ATARI_STEPS)
ATARI_SEEDS = 2         # the 2 seeds per library on Atari (about 2-3 h a run here)
# run.py dqn's own Atari defaults: 3 whole games per test, 108,000 frames at most, and the
# Nature network's 512-unit layer after the encoder (SB3's NatureCNN has it too)
ATARI_TEST_EPISODES = ATARI_DEFAULTS['dqn']['num_test_episodes']
ATARI_MAX_EP_LEN = ATARI_DEFAULTS['dqn']['max_ep_len']
ATARI_NET = list(ATARI_DEFAULTS['dqn']['ac_kwargs']['hidden_sizes'])
EPOCHS = 10  # evaluations per run: every n_timesteps / 10 steps
is_atari = is_atari_id


def env_seeds(env_id, seeds):
    """Seeds run on ``env_id``: ``seeds``, at most ``ATARI_SEEDS`` on Atari."""
    return min(seeds, ATARI_SEEDS) if is_atari(env_id) else seeds


def test_episodes(env_id):
    return ATARI_TEST_EPISODES if is_atari(env_id) else EVAL_EPISODES
WHO = ('ours', 'sb3', 'sac', 'ppo')  # DQN here, SB3's DQN, our discrete SAC, our PPO
COMPARED = ('CartPole-v1', 'Acrobot-v1', 'LunarLander-v3')  # SAC and PPO rows


def our_flags(env_id):
    """``run.py dqn`` flags for zoo's settings on ``env_id`` (the budget is ``command``'s)."""
    kw = zoo_dqn_kwargs(ZOO[env_id], EPOCHS)
    hid = ATARI_NET if is_atari(env_id) else kw['ac_kwargs']['hidden_sizes']
    return [item for key, value in kw.items()
            if key not in ('steps_per_epoch', 'epochs', 'ac_kwargs')
            for item in ('--' + key, repr(value))] + ['--hid', str(hid).replace(' ', '')]


def run_dir(who, env_id, seed):
    return osp.join(OUT, 'data', who, env_id.replace('/', '-'), 'run', 'run_s%d' % seed)


def progress_rows(path):
    """A progress file as a ``Table`` of columns (``spinup_tf.utils.progress_file``, the one
    reader of progress files; the rows a run is writing are left out): empty when it does
    not exist, or (with a warning) when it cannot be read."""
    from spinup_tf.utils.errors import UserInputError
    from spinup_tf.utils.progress_file import Table, read_table
    try:
        return read_table(path, partial='drop', missing_ok=True)
    except (OSError, UserInputError) as e:
        print('warning: %s' % (str(e) or path), file=sys.stderr)
        return Table(path, [], {}, 0)


def finished(who, env_id, seed):
    rows = progress_rows(osp.join(run_dir(who, env_id, seed), 'progress.txt'))
    return float(rows.last('TotalEnvInteracts', 0)) >= ZOO[env_id]['n_timesteps']


def command(who, env_id, seed):
    """The command of one run (a fresh process each)."""
    steps = ZOO[env_id]['n_timesteps']
    folder = run_dir(who, env_id, seed)
    if who == 'sb3':
        return [sys.executable, osp.abspath(__file__), 'sb3-run', env_id, str(seed), folder]
    if osp.exists(osp.join(folder, 'checkpoint')):  # stopped part-way: continue it
        return [sys.executable, osp.join(ROOT, 'run.py'), 'resume', folder]
    common = ['--env', env_id, '--seed', str(seed), '--steps_per_epoch', str(steps // EPOCHS),
              '--epochs', str(EPOCHS), '--num_test_episodes', str(test_episodes(env_id)),
              '--max_ep_len', str(ATARI_MAX_EP_LEN if is_atari(env_id) else 1000),
              '--data_dir', osp.dirname(osp.dirname(folder)),
              '--exp_name', 'run', '--overwrite', 'True']
    if who == 'ours':
        return [sys.executable, osp.join(ROOT, 'run.py'), 'dqn'] + common + our_flags(env_id)
    if who == 'sac':  # SAC's defaults, its start_steps scaled to the run (10 % of it)
        return [sys.executable, osp.join(ROOT, 'run.py'), 'sac'] + common + [
            '--start_steps', str(steps // 10), '--update_after', '1000']
    return [sys.executable, osp.join(ROOT, 'run.py'), 'ppo'] + common  # PPO's defaults


def sb3_envs(env_id):
    """SB3's training and test envs. On Atari both are ours (``spinup_tf.utils.atari``), so
    the two libraries play the same preprocessed game: the learner's with episodic lives,
    FIRE reset and clipped rewards (the game's in ``info['raw_reward']``), the test env with
    the game's own score. Elsewhere: ``gym.make``, the learner's wrapped in SB3's Monitor."""
    import gymnasium as gym
    if is_atari(env_id):
        return training_wrappers(make_atari(env_id)), make_atari(env_id)
    from stable_baselines3.common.monitor import Monitor
    return Monitor(gym.make(env_id)), gym.make(env_id)


def sb3_run(env_id, seed, folder):
    """One SB3 DQN run at zoo's settings, logging ``progress.txt`` as ours does.

    At each evaluation (Atari) the model, its replay buffer and the wall time so far are saved
    in ``folder/checkpoint``, and so they are when SIGTERM or SIGINT stops the run part-way
    (at the next env step; the process then exits 143). A run stopped part-way continues from
    there (SB3's own ``load`` and ``load_replay_buffer``, ``learn`` with
    ``reset_num_timesteps=False``: the exploration schedule, ``learning_starts`` and the target
    updates go on from the saved step count, and the env starts a new episode, so a continued
    run is not the uninterrupted one step for step; the ``Time`` column goes on from the saved
    wall time). Its rows after the checkpoint's last whole epoch are dropped first. Returns
    True when the run reached its budget, False when a signal stopped it."""
    import json
    import numpy as np
    import torch
    from stable_baselines3 import DQN
    torch.set_num_threads(1)  # as our session's one intra-op thread (utils/threads.py)
    from stable_baselines3.common.callbacks import BaseCallback
    z = dict(ZOO[env_id])
    steps = z.pop('n_timesteps')
    per_epoch, episodes = steps // EPOCHS, test_episodes(env_id)
    os.makedirs(folder, exist_ok=True)
    env, test_env = sb3_envs(env_id)
    ckpt = osp.join(folder, 'checkpoint')
    header = 'Epoch\tAverageEpRet\tAverageTestEpRet\tStdTestEpRet\tTotalEnvInteracts\tTime\n'
    progress = osp.join(folder, 'progress.txt')
    if osp.exists(osp.join(ckpt, 'model.zip')):
        model = DQN.load(osp.join(ckpt, 'model.zip'), env=env, device='cpu')
        model.load_replay_buffer(osp.join(ckpt, 'replay_buffer.pkl'))
        done_epochs = model.num_timesteps // per_epoch
        rows = progress_rows(progress).head(done_epochs)
        try:  # the wall time at the save (a checkpoint without it: the last row's)
            with open(osp.join(ckpt, 'state.json')) as f:
                elapsed = float(json.load(f)['elapsed'])
        except (OSError, ValueError, KeyError):
            elapsed = float(rows.last('Time', 0.0))
        kept = kept_lines(progress, len(rows))  # the rows as written, not reformatted
        with open(progress, 'w') as f:
            f.write(header + ''.join(line + '\n' for line in kept))
    else:
        policy = 'CnnPolicy' if is_atari(env_id) else 'MlpPolicy'  # z: its policy_kwargs
        model = DQN(policy, env, seed=seed, verbose=0, device='cpu', **z)
        done_epochs, elapsed = 0, 0.0
        with open(progress, 'w') as f:
            f.write(header)
    start = time.time() - elapsed
    stop = []  # a signal's number once SIGTERM or SIGINT arrived
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: stop.append(signum))

    saved_at = []  # the step of the last save: a stop right after an evaluation's save

    def save():
        if saved_at and saved_at[-1] == model.num_timesteps:
            return  # already saved at this step (the 5.6 GB buffer takes seconds)
        saved_at.append(model.num_timesteps)
        os.makedirs(ckpt, exist_ok=True)
        model.save(osp.join(ckpt, 'model.zip'))
        model.save_replay_buffer(osp.join(ckpt, 'replay_buffer.pkl'))
        with open(osp.join(ckpt, 'state.json'), 'w') as f:
            json.dump(dict(elapsed=time.time() - start, num_timesteps=model.num_timesteps), f)

    class Log(BaseCallback):
        """Every epoch: greedy test episodes, one progress row, and (Atari) a checkpoint."""

        def __init__(self):
            super().__init__()
            self.rets, self.ret, self.epoch = [], 0.0, done_epochs
            self.f = open(progress, 'a')

        def _on_step(self):
            for info, done in zip(self.locals.get('infos', []), self.locals.get('dones', [])):
                if 'raw_reward' in info:  # Atari: the game's score over a learner's episode
                    self.ret += info['raw_reward']
                    if done:
                        self.rets.append(self.ret)
                        self.ret = 0.0
                elif 'episode' in info:
                    self.rets.append(info['episode']['r'])
            if self.num_timesteps % per_epoch == 0:
                self.epoch += 1
                test = []
                for k in range(episodes):
                    o, _ = test_env.reset(seed=seed + 10000 * self.epoch + k)
                    done, ret = False, 0.0
                    while not done:
                        a, _ = self.model.predict(np.asarray(o), deterministic=True)
                        o, r, term, trunc, _ = test_env.step(a)
                        ret += r
                        done = term or trunc
                    test.append(ret)
                ep = np.mean(self.rets) if self.rets else float('nan')
                if is_atari(env_id) and self.num_timesteps < steps:
                    save()
                self.f.write('%d\t%r\t%r\t%r\t%d\t%r\n' % (
                    self.epoch, float(ep), float(np.mean(test)), float(np.std(test)),
                    self.num_timesteps, time.time() - start))
                self.f.flush()
                self.rets = []
            if stop and self.num_timesteps < steps:
                save()
                return False  # ends learn()
            return True

    model.learn(total_timesteps=steps - model.num_timesteps, callback=Log(),
                reset_num_timesteps=model.num_timesteps == 0)
    if model.num_timesteps < steps:
        return False  # stopped by a signal: the checkpoint stays
    if osp.isdir(ckpt):
        shutil.rmtree(ckpt)  # finished: the progress file is the result
    return True


def kept_lines(path, n):
    """The first ``n`` rows of the progress file ``path`` as lines of text (its header left
    out), read with the one reader of progress files."""
    from spinup_tf.utils.progress_file import Lines
    out = []
    if n <= 0 or not osp.lexists(path):
        return out
    with Lines(path) as lines:
        for i, (_, line) in enumerate(lines):
            if i == 0:
                continue
            if len(out) >= n:
                break
            out.append(line)
    return out


def run_all(envs, seeds, only):
    jobs = [(who, env_id, seed) for env_id in envs for seed in range(env_seeds(env_id, seeds))
            for who in only if who in ('ours', 'sb3') or env_id in COMPARED]
    todo = [j for j in jobs if not finished(*j)]
    print('%d runs to do' % len(todo), flush=True)
    for who, env_id, seed in todo:
        t0 = time.time()
        log = osp.join(OUT, 'data', 'logs', '%s_%s_s%d.log' % (who, env_id, seed))
        os.makedirs(osp.dirname(log), exist_ok=True)
        with open(log, 'a') as err:
            code, stopped = run_child(command(who, env_id, seed), err)
        print('%-5s %-15s seed %d: %s in %.0f s' % (who, env_id, seed,
                                                   'done' if code == 0 else 'exit %d' % code,
                                                   time.time() - t0), flush=True)
        if stopped:
            print('stopped by a signal: the run saved a checkpoint; start the script again '
                  'to continue', flush=True)
            return


def keep_niceness(pid):
    """Give the run's new session this script's niceness (Linux, best effort).

    With the kernel's autogroup scheduling (``/proc/sys/kernel/sched_autogroup_enabled``, on
    by default), CPU time is shared out between sessions first and a process's own nice value
    only counts within its session; a new session's group starts at nice 0. So
    ``nice -n 19 python plots/dqn_vs_sb3.py`` would leave each run, which sits in a session of
    its own, taking a full share from the user's other work (measured: a test suite 3x as
    slow beside two such runs). Writing the niceness to ``/proc/<pid>/autogroup`` keeps the
    runs in the background as asked."""
    try:
        with open('/proc/%d/autogroup' % pid, 'w') as f:
            f.write(str(os.nice(0)))
    except OSError:
        pass  # not Linux, autogroup off, or not allowed: nothing to keep


def run_child(cmd, err):
    """``(exit code, stopped)`` of one run in its own process. SIGTERM or SIGINT (Ctrl-C) to
    this script is passed on to the run once (it is in a session of its own, so a terminal's
    Ctrl-C reaches it only this way), and the script waits while the run saves its checkpoint
    and exits (``subprocess.call`` would kill it on Ctrl-C, checkpoint unwritten)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT,
                            start_new_session=True)
    keep_niceness(proc.pid)
    stopped = []

    def forward(signum, frame):
        if not stopped:
            proc.send_signal(signum)
        stopped.append(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        code = proc.wait()  # resumed after each handler (PEP 475)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code, bool(stopped)


def summary(who, env_id, seeds):
    """Per finished seed: final test return, mean of the last 3 evaluations, steps/s."""
    import numpy as np
    out = []
    for seed in range(env_seeds(env_id, seeds)):
        if not finished(who, env_id, seed):
            continue
        rows = progress_rows(osp.join(run_dir(who, env_id, seed), 'progress.txt'))
        test = [float(v) for v in rows['AverageTestEpRet']]
        out.append((test[-1], float(np.mean(test[-3:])), steps_per_second(env_id, rows)))
    return np.array(out)


def steps_per_second(env_id, rows):
    """A run's env steps/s from its progress rows (``TotalEnvInteracts``, ``Time``).

    Classic envs: the last row's steps over its wall time (a run goes in one stretch, tests
    included). Atari: the median over the epochs from ``learning_starts`` on of each epoch's
    steps over its time, ``median_k (T_k - T_{k-1}) / (t_k - t_{k-1})``. Such a run spans
    sessions, and an epoch can hold a pause (a run stopped with SIGSTOP while something else
    was measured) or the gap of a continued run; the median leaves such an epoch out, where
    the whole run's wall time would count it. The epochs before ``learning_starts`` make no
    update and run many times faster, so they are left out too. With no such epoch yet: the
    whole run's rate."""
    import numpy as np
    steps = [0.0] + [float(v) for v in rows['TotalEnvInteracts']]
    times = [0.0] + [float(v) for v in rows['Time']]
    if is_atari(env_id):
        start = ZOO[env_id]['learning_starts']
        rates = [(steps[k] - steps[k - 1]) / (times[k] - times[k - 1])
                 for k in range(1, len(steps))
                 if steps[k - 1] >= start and times[k] > times[k - 1]]
        if rates:
            return float(np.median(rates))
    return steps[-1] / times[-1]


def in_progress(who, env_id, seeds):
    """``[(seed, rows)]`` of the runs started but not finished (at least one row)."""
    out = []
    for seed in range(env_seeds(env_id, seeds)):
        rows = progress_rows(osp.join(run_dir(who, env_id, seed), 'progress.txt'))
        if len(rows) and not finished(who, env_id, seed):
            out.append((seed, rows))
    return out


def write_results(envs, seeds):
    """RESULTS.md and the figures, drawn with the project's own rc settings
    (``spinup_tf.tools.plot.style``)."""
    from spinup_tf.tools.plot import style
    with style():
        return _write_results(envs, seeds)


def _write_results(envs, seeds):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from spinup_tf.tools.plot import band, save_figure
    lines = ['# DQN against Stable-Baselines3 (rl-baselines3-zoo settings), with discrete SAC '
             'and PPO', '',
             'Made by `python plots/dqn_vs_sb3.py --seeds %d`. Test return: 10 greedy episodes '
             'at each of %d evaluations; "final" is the last, "last 3" the mean of the last '
             'three; mean ± std over the finished seeds (Atari: 3 whole games per evaluation, '
             '2 seeds, zoo\'s Atari settings at 1M steps). env steps/s: a run\'s steps over its '
             'wall time (tests included); the classic envs\' runs one at a time in one '
             'session, ours and SB3 alternating. Atari: one run per core beside another, over '
             'several sessions, so the median over a run\'s epochs from learning_starts on of '
             'the epoch\'s steps over its time (an epoch holding a pause or a session\'s gap '
             'is left out).' % (seeds, EPOCHS), '',
             '| env | steps | agent | seeds | final test return | last 3 | ours / SB3 (last 3) '
             '| env steps/s | speed ours / SB3 |', '|---|---|---|---|---|---|---|---|---|']
    labels = dict(ours='DQN (ours)', sb3='SB3 DQN', sac='discrete SAC (ours)', ppo='PPO (ours)')
    running = []  # (env, label, seed, rows) of the runs not finished yet
    atari_pair = False  # an Atari env with finished runs of both libraries: the speed note
    for env_id in envs:
        sums = {who: summary(who, env_id, seeds) for who in WHO}
        partial = {who: in_progress(who, env_id, seeds) for who in WHO}
        running += [(env_id, labels[who], seed, rows) for who in WHO
                    for seed, rows in partial[who]]
        if not any(len(s) for s in sums.values()) and not any(partial.values()):
            continue  # no run yet
        sb3 = sums['sb3']
        atari_pair |= bool(is_atari(env_id) and len(sb3) and len(sums['ours']))
        fig, ax = plt.subplots(figsize=(6, 4))
        for who in WHO:
            s = sums[who]
            if not len(s):
                continue
            ratio = speed = ''
            if who == 'ours' and len(sb3):
                ratio = '%.2f' % (s[:, 1].mean() / sb3[:, 1].mean()) if sb3[:, 1].mean() > 0 \
                    else '(SB3 mean %.1f)' % sb3[:, 1].mean()
                speed = '%.2f' % (s[:, 2].mean() / sb3[:, 2].mean()) \
                    if not is_atari(env_id) else 'paired: see note'
            lines.append('| %s | %d | %s | %d | %.1f ± %.1f | %.1f ± %.1f | %s | %.0f | %s |' % (
                env_id, ZOO[env_id]['n_timesteps'], labels[who], len(s), s[:, 0].mean(),
                s[:, 0].std(), s[:, 1].mean(), s[:, 1].std(), ratio, s[:, 2].mean(), speed))
            tables = [progress_rows(osp.join(run_dir(who, env_id, seed), 'progress.txt'))
                      for seed in range(env_seeds(env_id, seeds)) if finished(who, env_id, seed)]
            # the seeds combined as run.py plot combines them (spinup_tf.tools.plot.band)
            x, mean, low, high = band([t['TotalEnvInteracts'] for t in tables],
                                      [t['AverageTestEpRet'] for t in tables])
            ax.plot(x, mean, label=labels[who])
            ax.fill_between(x, low, high, alpha=0.2)
        for who in WHO:  # a run not finished: its own dashed curve, as far as it went
            for seed, rows in partial[who]:
                ax.plot(rows['TotalEnvInteracts'], rows['AverageTestEpRet'], '--', marker='.',
                        label='%s, seed %d (not finished)' % (labels[who], seed))
        ax.set_title(env_id)
        ax.set_xlabel('env steps')
        ax.set_ylabel('AverageTestEpRet (greedy, %d episodes)' % test_episodes(env_id))
        ax.legend()
        fig.tight_layout()
        save_figure(fig, osp.join(OUT, '%s.png' % env_id), dpi=80)
        plt.close(fig)
    if atari_pair:
        lines += ['', 'Note: Atari\'s runs span sessions and did not share one load '
                  'throughout (a run beside another on the second core, or alone while the '
                  'other was paused or stopped), so their env steps/s are not a paired '
                  'measure and give no ratio. Measured in one paired session: `python '
                  'bench/peers.py --cases dqn-atari` (the performance page).']
    if running:
        lines += ['', 'Runs not finished yet (left out of the table; dashed in the figures; '
                  'the script continues them):', '',
                  '| env | agent | seed | steps so far | test return at each evaluation | '
                  'env steps/s |', '|---|---|---|---|---|---|']
        for env_id, label, seed, rows in running:
            lines.append('| %s | %s | %d | %d | %s | %.0f |' % (
                env_id, label, seed, float(rows.last('TotalEnvInteracts')),
                ', '.join('%.1f' % float(v) for v in rows['AverageTestEpRet']),
                steps_per_second(env_id, rows)))
    with open(osp.join(OUT, 'RESULTS.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


def main(argv=None):
    global OUT
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ['sb3-run']:
        return 0 if sb3_run(argv[1], int(argv[2]), argv[3]) else 143
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--envs', nargs='+', default=list(ZOO), choices=list(ZOO))
    parser.add_argument('--seeds', type=int, default=3)
    parser.add_argument('--only', nargs='+', default=list(WHO), choices=WHO)
    parser.add_argument('--no-run', action='store_true')
    parser.add_argument('--out', default=OUT, help='default plots/dqn_sb3')
    args = parser.parse_args(argv)
    OUT = args.out
    os.makedirs(OUT, exist_ok=True)
    if not args.no_run:
        run_all(args.envs, args.seeds, args.only)
    write_results(list(ZOO), args.seeds)  # every env with a finished run, not only --envs
    return 0


if __name__ == '__main__':
    sys.exit(main())
