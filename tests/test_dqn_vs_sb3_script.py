"""plots/dqn_vs_sb3.py without SB3: zoo's settings become run.py flags as SB3 reads them, and
the table and figures come from the progress files (the runs themselves need SB3)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                'plots'))
import dqn_vs_sb3 as bench  # noqa: E402


def test_zoo_settings_become_our_flags():
    flags = dict(zip(*[iter(bench.our_flags('Acrobot-v1'))] * 2))
    # gradient_steps -1 (SB3: as many as the steps collected) is train_freq
    assert flags['--update_every'] == '4' and flags['--gradient_steps'] == '4'
    assert flags['--start_steps'] == flags['--update_after'] == '0'
    assert flags['--target_update_interval'] == '250' and flags['--hid'] == '[256,256]'
    flags = dict(zip(*[iter(bench.our_flags('CartPole-v1'))] * 2))
    assert flags['--update_every'] == '256' and flags['--gradient_steps'] == '128'
    assert float(flags['--eps_end']) == 0.04 and float(flags['--lr']) == 2.3e-3


def test_sb3_and_ours_run_the_one_table_that_run_py_dqn_defaults_to():
    """Like with like: SB3 gets each env_defaults.ZOO_DQN entry as it stands, ours the same
    entry as flags, and those flags are what ``run.py dqn --env ENV`` gives with none."""
    from spinup_tf.tools.env_defaults import ZOO_DQN, env_defaults
    for env_id in ('CartPole-v1', 'Acrobot-v1', 'LunarLander-v3', 'MountainCar-v0'):
        assert bench.ZOO[env_id] == ZOO_DQN[env_id]
        flags = dict(zip(*[iter(bench.our_flags(env_id))] * 2))
        defaults = env_defaults('dqn', env_id)
        assert flags.pop('--hid') == str(defaults.pop('ac_kwargs')['hidden_sizes']).replace(' ', '')
        cmd = bench.command('ours', env_id, 0)
        opts = dict(zip(cmd[3::2], cmd[4::2]))
        for key in ('steps_per_epoch', 'epochs'):
            flags['--' + key] = opts['--' + key]
        assert {k: float(v) for k, v in flags.items()} == \
            {'--' + k: float(v) for k, v in defaults.items()}, env_id
    pong = dict(bench.ZOO['PongNoFrameskip-v4'])
    assert pong.pop('n_timesteps') == 1000000
    assert pong == {k: v for k, v in ZOO_DQN['atari'].items() if k != 'n_timesteps'}


def _progress(path, returns, seconds):
    os.makedirs(path)
    steps = bench.ZOO['CartPole-v1']['n_timesteps'] // bench.EPOCHS
    with open(os.path.join(path, 'progress.txt'), 'w') as f:
        f.write('Epoch\tAverageTestEpRet\tTotalEnvInteracts\tTime\n')
        for i, r in enumerate(returns):
            f.write('%d\t%r\t%d\t%r\n' % (i + 1, r, steps * (i + 1), seconds * (i + 1) / 10))


def test_table_and_figure_from_progress_files(tmp_path):
    out = str(tmp_path)
    for seed in range(2):
        bench.OUT = out
        _progress(bench.run_dir('ours', 'CartPole-v1', seed), [100.0] * 7 + [200, 300, 400],
                  100.0)
        _progress(bench.run_dir('sb3', 'CartPole-v1', seed), [100.0] * 7 + [100, 150, 200],
                  300.0)
    _progress(bench.run_dir('sb3', 'CartPole-v1', 2), [100.0] * 5, 150.0)  # not finished
    assert bench.main(['--no-run', '--envs', 'CartPole-v1', 'Acrobot-v1', '--seeds', '3',
                       '--out', out]) == 0
    text = (tmp_path / 'RESULTS.md').read_text()
    ours = [l for l in text.splitlines() if '| DQN (ours) |' in l][0].split(' | ')
    sb3 = [l for l in text.splitlines() if '| SB3 DQN |' in l][0].split(' | ')
    assert ours[3] == '2' and sb3[3] == '2'  # the unfinished seed is left out
    assert ours[4] == '400.0 ± 0.0' and ours[5] == '300.0 ± 0.0' and sb3[5] == '150.0 ± 0.0'
    assert ours[6] == '2.00' and ours[8].strip(' |') == '3.00'  # returns and speed over SB3's
    assert (tmp_path / 'CartPole-v1.png').stat().st_size > 1000
    assert 'Acrobot-v1' not in text and not (tmp_path / 'Acrobot-v1.png').exists()
    # the unfinished seed: listed below the table with its evaluations so far, not in it
    running = text.split('Runs not finished yet')[1]
    row = [l for l in running.splitlines() if '| SB3 DQN | 2 |' in l][0].split(' | ')
    assert row[0] == '| CartPole-v1' and row[3] == '25000'
    assert row[4] == ', '.join(['100.0'] * 5) and row[5].strip(' |') == '333'


def test_an_env_with_only_unfinished_runs_gets_its_figure_and_no_table_row(tmp_path):
    bench.OUT = str(tmp_path)
    _progress(bench.run_dir('ours', 'CartPole-v1', 0), [-20.0, -19.0, -13.0], 100.0)
    assert bench.main(['--no-run', '--envs', 'CartPole-v1', '--out', str(tmp_path)]) == 0
    text = (tmp_path / 'RESULTS.md').read_text()
    table, running = text.split('Runs not finished yet')
    assert '| CartPole-v1 |' not in table
    assert '| CartPole-v1 | DQN (ours) | 0 | 15000 | -20.0, -19.0, -13.0 |' in running
    assert (tmp_path / 'CartPole-v1.png').stat().st_size > 1000


def test_atari_speed_is_the_median_learning_epoch_and_gives_no_ratio(tmp_path):
    """A paused epoch and the update-free first epoch leave an Atari run's env steps/s alone,
    and wall time across sessions gives no ours / SB3 speed ratio."""
    bench.OUT = str(tmp_path)
    env = 'PongNoFrameskip-v4'
    per_epoch = bench.ZOO[env]['n_timesteps'] // bench.EPOCHS
    assert bench.ZOO[env]['learning_starts'] == per_epoch  # the first epoch makes no update
    epoch_seconds = {'ours': [50, 1000, 1000, 9000, 1000, 1000, 1000, 1000, 1000, 1000],
                     'sb3': [80, 2000, 2000, 2000, 2000, 20000, 2000, 2000, 2000, 2000]}
    for who, seconds in epoch_seconds.items():
        for seed in range(2):
            path = bench.run_dir(who, env, seed)
            os.makedirs(path)
            with open(os.path.join(path, 'progress.txt'), 'w') as f:
                f.write('Epoch\tAverageTestEpRet\tTotalEnvInteracts\tTime\n')
                for k in range(bench.EPOCHS):
                    f.write('%d\t%r\t%d\t%r\n' % (k + 1, -21.0 + 4 * k, per_epoch * (k + 1),
                                                   float(sum(seconds[:k + 1]))))
    rows = bench.progress_rows(os.path.join(bench.run_dir('sb3', env, 0), 'progress.txt'))
    assert bench.steps_per_second(env, rows) == per_epoch / 2000
    assert bench.steps_per_second(env, rows.head(1)) == per_epoch / 80  # no learning epoch yet
    assert bench.steps_per_second('CartPole-v1', rows) == 10 * per_epoch / 36080  # wall time
    assert bench.main(['--no-run', '--envs', env, '--out', str(tmp_path)]) == 0
    text = (tmp_path / 'RESULTS.md').read_text()
    ours = [l for l in text.splitlines() if '| DQN (ours) |' in l][0].split(' | ')
    sb3 = [l for l in text.splitlines() if '| SB3 DQN |' in l][0].split(' | ')
    assert ours[3] == sb3[3] == '2' and ours[7] == '100' and sb3[7] == '50'
    assert ours[8].strip(' |') == 'paired: see note' and 'bench/peers.py --cases dqn-atari' in text


def test_atari_runs_zoo_atari_settings_on_two_seeds_of_whole_games():
    flags = dict(zip(*[iter(bench.our_flags('PongNoFrameskip-v4'))] * 2))
    assert flags['--hid'] == '[512]' and flags['--replay_size'] == '100000'
    assert flags['--start_steps'] == flags['--update_after'] == '100000'
    assert flags['--update_every'] == '4' and flags['--gradient_steps'] == '1'
    assert flags['--target_update_interval'] == '1000' and float(flags['--eps_end']) == 0.01
    cmd = bench.command('ours', 'PongNoFrameskip-v4', 0)
    opts = dict(zip(cmd[3::2], cmd[4::2]))
    assert opts['--max_ep_len'] == '27000' and opts['--num_test_episodes'] == '3'
    assert int(opts['--steps_per_epoch']) * int(opts['--epochs']) == 1000000
    assert bench.env_seeds('PongNoFrameskip-v4', 3) == 2 and bench.env_seeds('CartPole-v1', 3) == 3
    assert 'ALE-Pong-v5' in bench.run_dir('sb3', 'ALE/Pong-v5', 1)


SMALL_SB3_RUN = '''
import sys
sys.path.insert(0, %r)
import dqn_vs_sb3 as bench
bench.ZOO['CartPole-v1'] = dict(bench.ZOO['CartPole-v1'], n_timesteps=20000, train_freq=16,
                                gradient_steps=1, learning_starts=500)
sys.exit(bench.main(['sb3-run', 'CartPole-v1', '0', sys.argv[1]]))
'''


def test_sb3_run_stopped_by_sigterm_keeps_a_checkpoint_and_continues_from_it(tmp_path):
    """SIGTERM mid-run: the SB3 child saves its model, buffer and wall time, exits 143 and
    keeps the checkpoint; started again it drops no finished row, writes each epoch once,
    and removes the checkpoint at the end. Needs SB3 (not a dependency: skipped without)."""
    pytest.importorskip('stable_baselines3')
    import json
    import signal
    import subprocess
    import time
    folder = str(tmp_path / 'run_s0')
    cmd = [sys.executable, '-c', SMALL_SB3_RUN % os.path.dirname(bench.__file__), folder]
    progress = os.path.join(folder, 'progress.txt')
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and len(bench.progress_rows(progress)) < 2:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 143
    rows = bench.progress_rows(progress)
    assert 2 <= len(rows) < bench.EPOCHS
    with open(os.path.join(folder, 'checkpoint', 'state.json')) as f:
        state = json.load(f)
    assert rows.last('TotalEnvInteracts') <= state['num_timesteps'] < 20000
    assert state['elapsed'] >= rows.last('Time')
    assert subprocess.call(cmd, stderr=subprocess.DEVNULL) == 0
    rows = bench.progress_rows(progress)
    assert rows['Epoch'].tolist() == list(range(1, bench.EPOCHS + 1))
    assert rows['TotalEnvInteracts'].tolist() == [2000 * (i + 1) for i in range(10)]
    times = rows['Time'].tolist()
    assert times == sorted(times) and times[-1] > state['elapsed']
    assert not os.path.exists(os.path.join(folder, 'checkpoint'))


CHILD = '''
import signal, sys, time
got = []
signal.signal(signal.SIGTERM, lambda *a: got.append('TERM'))
signal.signal(signal.SIGINT, lambda *a: got.append('INT'))
open(sys.argv[1], 'w').write('ready')
while not got:
    time.sleep(0.01)
time.sleep(0.5)  # "saving a checkpoint"
open(sys.argv[1], 'w').write(' '.join(got))
sys.exit(143)
'''


@pytest.mark.parametrize('signum', ['SIGTERM', 'SIGINT'])
def test_a_signal_to_the_script_reaches_the_run_once_and_the_script_waits(tmp_path, signum):
    """Two signals to the script (a user pressing Ctrl-C twice): the run gets one, and the
    script waits until it has saved and exited instead of killing it."""
    import signal
    import subprocess
    import threading
    import time
    signum = getattr(signal, signum)
    flag = tmp_path / 'flag'

    def send_two():
        while not (flag.exists() and flag.read_text() == 'ready'):
            time.sleep(0.01)
        os.kill(os.getpid(), signum)
        os.kill(os.getpid(), signum)

    before = signal.getsignal(signum)
    threading.Thread(target=send_two, daemon=True).start()
    with open(tmp_path / 'err', 'w') as err:
        code, stopped = bench.run_child([sys.executable, '-c', CHILD, str(flag)], err)
    assert code == 143 and stopped
    assert flag.read_text() == ('TERM' if signum == signal.SIGTERM else 'INT')
    assert signal.getsignal(signum) is before


AUTOGROUP = '/proc/sys/kernel/sched_autogroup_enabled'


@pytest.mark.skipif(not (os.path.exists(AUTOGROUP) and open(AUTOGROUP).read().strip() == '1'),
                    reason='needs Linux with autogroup scheduling on')
def test_a_niced_script_keeps_its_runs_niced_in_their_own_session(tmp_path):
    """Each run sits in a session of its own, whose autogroup would start at nice 0: it gets
    the script's niceness, so ``nice -n 19`` still keeps the runs behind other work."""
    import subprocess
    run = tmp_path / 'run.py'  # reports whether it leads its own session, and its group's nice
    run.write_text('import os, sys\nsys.stderr.write("%s %s" % (os.getsid(0) == os.getpid(), '
                   'open("/proc/self/autogroup").read().split()[-1]))\n')
    script = ('import os, sys; sys.path.insert(0, %r); import dqn_vs_sb3; os.nice(5); '
              'dqn_vs_sb3.run_child([sys.executable, %r], sys.stderr)'
              % (os.path.dirname(os.path.abspath(bench.__file__)), str(run)))
    got = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                         timeout=60)
    assert got.returncode == 0, got.stderr
    assert got.stderr.split()[-2:] == ['True', str(os.nice(0) + 5)]
