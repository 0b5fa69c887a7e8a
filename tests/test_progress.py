"""The live progress line, the short config and the closing summary
(``spinup_tf.utils.progress``)."""
import io
import os
from types import SimpleNamespace

from conftest import run_cli
from spinup_tf.utils.progress import Progress, results_summary, short_config



class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Tty(io.StringIO):
    def isatty(self):
        return True


def _logger(returns=()):
    return SimpleNamespace(epoch_dict={'EpRet': list(returns)} if returns else {},
                           output_dir='/runs/x')


def test_plain_line_every_interval_when_not_a_tty():
    clock, out = Clock(), io.StringIO()
    progress = Progress(_logger([-10.0, -7.5]), 100, 300, stream=out, interval=5.0,
                        clock=clock)
    for done in range(1, 60):
        clock.now = done * 0.1  # 10 steps/s
        progress(done)
    lines = out.getvalue().splitlines()
    assert lines == ['epoch 1/3 | step 50/100 (50/300) | 10 steps/s | episodes 2, last return '
                     '-7.5 | 25s left']


def test_redrawn_in_place_on_a_tty_and_erased_before_the_table():
    clock, out = Clock(), Tty()
    progress = Progress(_logger(), 10, 20, stream=out, clock=clock)
    for done in range(1, 11):
        clock.now = done * 1.0
        progress(done)
    text = out.getvalue()
    assert '\n' not in text
    assert text.count('\r') == 10  # 9 redraws (one per second > 0.25 s) and the erase
    assert text.endswith('\r\033[K')
    assert '\repoch 1/2 | step 9/10 (9/20) | 1 steps/s | episodes 0 | 11s left\033[K' in text


def test_resumed_rate_counts_this_process_only():
    clock, out = Clock(), io.StringIO()
    progress = Progress(_logger(), 100, 1000, start=500, stream=out, clock=clock)
    clock.now = 10.0
    assert '(600/1000) | 10 steps/s' in progress.line(600)
    assert progress.line(600).endswith('40s left')


def test_short_config_lists_what_differs_from_the_defaults():
    config = dict(algo='td3', env_id='Pendulum-v1', seed=3, epochs=2, gamma=0.99,
                  ac_kwargs={}, fused=True, logger_kwargs={'output_dir': 'x'},
                  env_fn={'env_id': 'LunarLander-v3', 'env_kwargs': {'continuous': True}})
    text = short_config(config, 'x/config.json')
    assert text == ("Config: td3 Pendulum-v1 {'continuous': True} | epochs=2, seed=3  "
                    "(full: x/config.json)")
    assert short_config(dict(algo='ppo', env_id='CartPole-v1')) == \
        'Config: ppo CartPole-v1 | all defaults'


def test_summary_names_the_folder_the_model_and_the_progress_file(tmp_path):
    text = results_summary(str(tmp_path))
    assert text.splitlines()[0] == 'Run folder: %s' % tmp_path
    assert os.path.join(str(tmp_path), 'tf1_save') in text
    assert os.path.join(str(tmp_path), 'progress.txt') in text


def test_a_run_prints_short_config_progress_and_summary(tmp_path):
    env = dict(os.environ, SPINUP_PROGRESS_EVERY='0', MPLBACKEND='Agg')
    proc = run_cli('ppo', '--env', 'CartPole-v1', '--epochs', '2', '--steps_per_epoch', '100',
                   '--hid', '[8]', '--train_pi_iters', '2', '--train_v_iters', '2',
                   '--data_dir', tmp_path, '--exp_name', 'p', env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = os.path.join(str(tmp_path), 'p', 'p_s0')
    assert 'Config: ppo CartPole-v1 | ac_kwargs=' in proc.stdout
    assert 'Saving config' not in proc.stdout
    assert proc.stdout.rstrip().splitlines()[-3:] == results_summary(run).splitlines()
    plain = [l for l in proc.stderr.splitlines() if l.startswith('epoch ')]
    assert plain and plain[-1].startswith('epoch 2/2 | step ')
