"""ExperimentGrid (Spinning Up's naming and variants) and grid runs: in-process, in parallel
worker processes, and on a local Ray instance."""
import multiprocessing
import os
import sys

import pytest

from conftest import run_cli
from spinup_tf.tools.grid import ExperimentGrid, valid_str
from spinup_tf.tools.results import VariantResult, final_performance, format_summary
from spinup_tf.utils import threads
from spinup_tf.utils.threads import ALONE, ONE_CORE, Threads, decide, physical_cores

TINY = ['--epochs', '1', '--steps_per_epoch', '200', '--start_steps', '100', '--update_after',
        '100', '--num_test_episodes', '1', '--max_ep_len', '100']


# ------------------------------------------------------------------------------------------
# Names and variants, as Spinning Up defines them
# ------------------------------------------------------------------------------------------
def _spinup_example():
    eg = ExperimentGrid('g')
    eg.add('test:a', [1, 2, 3], 'ta', True)
    eg.add('test:b', [1, 2, 3])
    eg.add('some', [4, 5])
    eg.add('why', [True, False])
    eg.add('huh', 5)
    eg.add('no', 6, in_name=True)
    return eg


def test_variants_are_the_product_with_nested_keys():
    eg = _spinup_example()
    variants = eg.variants()
    assert len(variants) == 3 * 3 * 2 * 2 == eg.num_variants()
    assert variants[0] == {'test': {'a': 1, 'b': 1}, 'some': 4, 'why': True, 'huh': 5, 'no': 6}
    # The first key varies slowest, the last fastest.
    assert [v['why'] for v in variants[:2]] == [True, False]
    assert [v['test']['a'] for v in variants[::12]] == [1, 2, 3]
    assert len({repr(v) for v in variants}) == len(variants)


def test_variant_names_shorthands_bools_in_name_and_seed():
    eg = _spinup_example()
    names = [eg.variant_name(v) for v in eg.variants()]
    # 'ta' given; 'test:b' -> 'tes-b'; bool-only 'why' shows only when True; 'huh' has one
    # value; 'no' is forced in.
    assert names[0] == 'g_ta1_tes-b1_som4_why_no6'
    assert names[1] == 'g_ta1_tes-b1_som4_no6'
    assert len(set(names)) == len(names)

    eg = ExperimentGrid('')
    eg.add('seed', [0, 10], in_name=True)
    eg.add('env_name', 'Pendulum-v1', '', True)
    eg.add('ac_kwargs:hidden_sizes', [[64, 64], (32,)], 'hid')
    eg.add('pi_lr', [1e-3, 3e-4])
    names = [eg.variant_name(v) for v in eg.variants()]
    assert names[:4] == ['pendulum-v1_hid64-64_pi0-001', 'pendulum-v1_hid64-64_pi0-0003',
                         'pendulum-v1_hid32_pi0-001', 'pendulum-v1_hid32_pi0-0003']
    assert names[4:] == names[:4]  # the seed is never in the name


def test_default_shorthand_and_valid_str():
    eg = ExperimentGrid()
    assert eg._default_shorthand('ac_kwargs:hidden_sizes') == 'ac-hid'
    assert eg._default_shorthand('pi_lr') == 'pi'
    assert eg._default_shorthand('seed') == 'see'
    assert valid_str([64, 64]) == '64-64'
    assert valid_str('Pendulum-v1') == 'pendulum-v1'
    assert valid_str(0.5) == '0-5'
    assert valid_str(os.path.join) == 'join'


def test_nested_keys_merge_into_a_dict_value_and_never_share_lists():
    eg = ExperimentGrid('x')
    eg.add('ac_kwargs', [{'activation': 'relu', 'hidden_sizes': [1]}])
    eg.add('ac_kwargs:hidden_sizes', [[8], [16]], 'hid')
    v1, v2 = eg.variants()
    assert v1['ac_kwargs'] == {'activation': 'relu', 'hidden_sizes': [8]}
    assert v2['ac_kwargs'] == {'activation': 'relu', 'hidden_sizes': [16]}
    v1['ac_kwargs']['hidden_sizes'].append(99)
    assert eg.variants()[0]['ac_kwargs']['hidden_sizes'] == [8]
    with pytest.raises(ValueError, match='already added'):
        eg.add('ac_kwargs', [{}])
    bad = ExperimentGrid('y')
    bad.add('a', 1)
    bad.add('a:b', 2)
    with pytest.raises(ValueError, match='both a value and nested keys'):
        bad.variants()


def test_experiments_seed_env_folder_and_duplicate_folders(tmp_path, capsys):
    eg = ExperimentGrid('exp')
    eg.add('env_name', 'Pendulum-v1')
    eg.add('lr', [0.1, 0.2])
    exps = eg.experiments(dict, data_dir=str(tmp_path))
    assert [e.label for e in exps] == ['exp_lr0-1_s0', 'exp_lr0-2_s0']
    fn, kwargs = exps[0]
    assert fn is dict and kwargs['seed'] == 0 and kwargs['env_fn'].env_id == 'Pendulum-v1'
    assert 'env_name' not in kwargs
    assert kwargs['logger_kwargs'] == {
        'output_dir': str(tmp_path / 'exp_lr0-1' / 'exp_lr0-1_s0'), 'exp_name': 'exp_lr0-1'}

    # Spinning Up: the thunk may be the name of a key whose values are callables.
    eg = ExperimentGrid('t')
    eg.add('algo', [dict, list], 'alg')
    exps = eg.experiments('algo', data_dir=str(tmp_path))
    assert [e.thunk for e in exps] == [dict, list] and 'algo' not in exps[0].kwargs
    assert [e.exp_name for e in exps] == ['t_algdict', 't_alglist']

    eg = ExperimentGrid('d')
    eg.add('seed', [1, 1])
    with pytest.raises(ValueError, match='would both write to'):
        eg.experiments(dict, data_dir=str(tmp_path))
    with pytest.raises(ValueError, match='workers'):
        ExperimentGrid('w').run(dict, workers=0, data_dir=str(tmp_path))
    with pytest.raises(ValueError, match='backend'):
        ExperimentGrid('w').run(dict, backend='mpi', data_dir=str(tmp_path))
    assert not list(tmp_path.iterdir())  # nothing ran, nothing written


def test_final_performance_and_summary_table(tmp_path):
    run = tmp_path / 'r'
    run.mkdir()
    assert final_performance(str(run)) == (None, None)
    (run / 'progress.txt').write_text('Epoch\tAverageEpRet\tAverageTestEpRet\n'
                                      '1\t-5.0\t-4.0\n2\t-3.0\t-2.5\n')
    assert final_performance(str(run)) == (-2.5, 'AverageTestEpRet')
    (run / 'progress.txt').write_text('Epoch\tAverageEpRet\n1\t7.25\n')
    assert final_performance(str(run)) == (7.25, 'AverageEpRet')
    table = format_summary([
        VariantResult('a_s0', 'a', 0, str(run), 'ok', '', 1.0, 7.25, 'AverageEpRet'),
        VariantResult('a_s1', 'a', 1, str(tmp_path / 'x'), 'failed', 'RuntimeError: boom')])
    assert '1 of 2 variants ok, 1 failed' in table
    assert 'a_s1: RuntimeError: boom' in table and '7.25' in table and str(run) in table


# ------------------------------------------------------------------------------------------
# Threads per run
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize('workers, cores, expected', [
    (1, 1, ALONE), (1, 2, ALONE), (1, 16, ALONE),          # one run has the machine
    (2, 2, ONE_CORE), (4, 2, ONE_CORE), (8, 8, ONE_CORE),  # the runs fill the cores
    (3, 4, ONE_CORE),                                      # 4 // 3: one core each
    (2, 4, Threads(1, 2, 2)), (3, 8, Threads(1, 2, 2)), (2, 16, Threads(1, 2, 8)),
])
def test_thread_decision(workers, cores, expected):
    assert decide(workers, cores) == expected


def test_thread_settings_reach_the_environment_and_the_session(monkeypatch):
    assert (ALONE.intra_op, ALONE.inter_op, ALONE.blas) == (1, 2, None)
    assert ONE_CORE.env() == {
        'SPINUP_TF_THREADS': '1,1', 'TF_NUM_INTRAOP_THREADS': '1', 'TF_NUM_INTEROP_THREADS': '1',
        'OMP_NUM_THREADS': '1', 'OPENBLAS_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1'}
    assert 'OMP_NUM_THREADS' not in ALONE.env()  # one run alone: the libraries' defaults
    assert threads.session_threads({}) == (1, 2)
    assert threads.session_threads({'SPINUP_TF_THREADS': '1,1'}) == (1, 1)
    for bad in ('1', 'a,b', '1,-1'):
        with pytest.raises(ValueError, match='SPINUP_TF_THREADS'):
            threads.session_threads({'SPINUP_TF_THREADS': bad})
    with pytest.raises(ValueError):
        decide(0, 2)
    monkeypatch.setenv('OMP_NUM_THREADS', '7')
    monkeypatch.delenv('SPINUP_TF_THREADS', raising=False)
    with threads.applied(ONE_CORE):
        assert os.environ['OMP_NUM_THREADS'] == '1' and os.environ['SPINUP_TF_THREADS'] == '1,1'
        assert _session_threads() == (1, 1)
    assert os.environ['OMP_NUM_THREADS'] == '7' and 'SPINUP_TF_THREADS' not in os.environ
    assert _session_threads() == (1, 2)


def _session_threads():
    from spinup_tf.utils.tf1 import make_session
    sess = make_session()
    try:
        return (sess._config.intra_op_parallelism_threads,
                sess._config.inter_op_parallelism_threads)
    finally:
        sess.close()


def test_physical_cores_is_capped_by_the_cpus_this_process_may_use(monkeypatch):
    class FakePsutil:
        @staticmethod
        def cpu_count(logical=True):
            return 8 if not logical else 16

    monkeypatch.setitem(sys.modules, 'psutil', FakePsutil)
    monkeypatch.setattr(os, 'sched_getaffinity', lambda pid: set(range(16)), raising=False)
    assert physical_cores() == 8
    monkeypatch.setattr(os, 'sched_getaffinity', lambda pid: {0, 1, 2}, raising=False)
    assert physical_cores() == 3
    monkeypatch.setitem(sys.modules, 'psutil', None)  # no psutil: /proc/cpuinfo
    monkeypatch.setattr(os, 'sched_getaffinity', lambda pid: {0}, raising=False)
    assert physical_cores() == 1


@pytest.mark.parametrize('cores, busy, expected', [
    (2, 0.0, 2), (2, 0.4, 2), (2, 0.6, 1), (2, 1.0, 1), (2, 1.9, 1), (2, 6.0, 1),
    (1, 0.0, 1), (8, 3.2, 5), (8, 0.0, 8)])
def test_auto_workers_are_the_cores_other_processes_leave_idle(cores, busy, expected):
    assert threads.auto_workers(cores, busy) == expected


def test_busy_cores_from_two_samples_of_proc_stat(tmp_path, monkeypatch):
    stat = tmp_path / 'stat'
    # user nice system idle iowait irq softirq steal: 300 of 400 ticks busy in between.
    stat.write_text('cpu  100 0 0 100 0 0 0 0 0 0\ncpu0 50 0 0 50 0 0 0 0 0 0\n')
    later = 'cpu  350 0 50 140 60 0 0 0 0 0\n'
    monkeypatch.setattr(threads.time, 'sleep', lambda s: stat.write_text(later))
    assert threads.busy_cores(path=str(stat), cores=2) == pytest.approx(2 * 300 / 400)
    assert threads.busy_cores(path=str(tmp_path / 'missing'), cores=2) == 0.0
    from spinup_tf.tools import launch
    monkeypatch.setattr(launch, 'physical_cores', lambda: 2)
    monkeypatch.setattr(launch, 'busy_cores', lambda cores: 1.5)
    assert launch.resolve_workers('auto') == 1
    monkeypatch.setattr(launch, 'busy_cores', lambda cores: 0.1)
    assert launch.resolve_workers('auto') == 2


def session_probe(seed, logger_kwargs):
    """A stand-in for an algorithm: prints the thread settings its TF session gets."""
    preloaded = 'tensorflow' in sys.modules
    intra, inter = _session_threads()
    print('probe: intra-op %d, inter-op %d, OMP %s, TF preloaded %s' % (
        intra, inter, os.environ.get('OMP_NUM_THREADS'), preloaded))


@pytest.mark.parametrize('workers', [1, 2])
def test_each_run_of_a_grid_gets_the_decided_threads(tmp_path, capsys, monkeypatch, workers):
    from spinup_tf.tools import launch
    monkeypatch.setattr(launch, 'physical_cores', lambda: 2)
    monkeypatch.delenv('SPINUP_TF_THREADS', raising=False)
    eg = ExperimentGrid('probe')
    eg.add('seed', [0, 1])
    results = eg.run(session_probe, data_dir=str(tmp_path), workers=workers)
    out = capsys.readouterr().out
    assert [r.status for r in results] == ['ok', 'ok']
    if workers == 2:
        assert out.count('[grid] threads: ') == 1
        assert '[grid] threads: 2 runs at once on 2 cores: each run TF intra-op 1, ' \
               'inter-op 1; OpenMP/BLAS 1' in out
        # In the worker processes, forked from a server that imported TensorFlow once.
        preloaded = 'forkserver' in multiprocessing.get_all_start_methods()
        for seed in (0, 1):
            assert '[probe_s%d] probe: intra-op 1, inter-op 1, OMP 1, TF preloaded %s' % (
                seed, preloaded) in out
    else:
        assert '[grid] threads: 1 run at once on 2 cores: each run TF intra-op 1, ' \
               'inter-op 2; OpenMP/BLAS default' in out
        assert out.count('probe: intra-op 1, inter-op 2,') == 2  # here, in this process
    assert 'SPINUP_TF_THREADS' not in os.environ


def test_workers_fork_from_a_server_started_with_the_grids_thread_settings(monkeypatch):
    from spinup_tf.tools import launch
    if 'forkserver' not in multiprocessing.get_all_start_methods():
        pytest.skip('no forkserver start method on this platform')
    exps = ExperimentGrid('c').experiments(session_probe, data_dir='unused')
    monkeypatch.setitem(launch._forkserver, 'env', ONE_CORE.env())
    assert launch._worker_context(ONE_CORE, exps).get_start_method() == 'forkserver'
    # A server started with other settings cannot give a worker these: each worker spawns.
    assert launch._worker_context(Threads(1, 2, 4), exps).get_start_method() == 'spawn'


# ------------------------------------------------------------------------------------------
# Running grids
# ------------------------------------------------------------------------------------------
def fake_algo(seed, logger_kwargs, mode='ok'):
    """A stand-in for an algorithm: writes a one-row progress.txt, raises, or dies."""
    if mode == 'raise':
        raise RuntimeError('boom (seed %d)' % seed)
    if mode == 'exit':
        sys.stdout.flush()
        os._exit(3)
    out = logger_kwargs['output_dir']
    os.makedirs(out)
    with open(os.path.join(out, 'progress.txt'), 'w') as f:
        f.write('Epoch\tAverageEpRet\n1\t%d\n' % (10 * seed + 1))
    print('fake run: threads', os.environ.get('OMP_NUM_THREADS'))


@pytest.mark.parametrize('workers', [1, 2])
def test_failed_variants_are_reported_and_the_others_complete(tmp_path, capsys, monkeypatch,
                                                              workers):
    from spinup_tf.tools import launch
    monkeypatch.setattr(launch, 'physical_cores', lambda: 2)  # 2 workers fill 2 cores
    eg = ExperimentGrid('fake')
    eg.add('mode', ['ok', 'raise', 'exit'] if workers > 1 else ['ok', 'raise'])
    eg.add('seed', [0, 1])
    results = eg.run(fake_algo, data_dir=str(tmp_path), workers=workers)
    out = capsys.readouterr().out
    by_label = {r.label: r for r in results}
    for seed in (0, 1):
        ok = by_label['fake_modok_s%d' % seed]
        assert ok.status == 'ok' and ok.performance == 10 * seed + 1
        assert (tmp_path / 'fake_modok' / ok.label / 'progress.txt').exists()
        bad = by_label['fake_modraise_s%d' % seed]
        assert bad.status == 'failed' and bad.error == 'RuntimeError: boom (seed %d)' % seed
    if workers > 1:
        assert by_label['fake_modexit_s0'].status == 'failed'
        assert by_label['fake_modexit_s0'].error == 'exited with code 3'
        # Worker output comes back prefixed with its variant; one BLAS thread per worker.
        assert '[fake_modok_s1] fake run: threads 1' in out
    assert 'Grid summary: 2 of %d variants ok' % len(results) in out
    assert 'fake_modraise_s1: RuntimeError: boom (seed 1)' in out


def test_bad_launch_options(tmp_path, capsys, monkeypatch):
    from spinup_tf.tools.cli import main

    def one_error(args):
        code = main(['td3', '--env', 'Pendulum-v1', '--data_dir', str(tmp_path / 'd')] + args)
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        return err.strip()

    assert '--workers expects' in one_error(['--workers', '0'])
    assert '--workers expects' in one_error(['--workers', 'many'])
    assert '--backend expects' in one_error(['--backend', 'mpi'])
    assert 'is for --backend ray' in one_error(['--address', 'auto'])
    assert 'would both write to' in one_error(['--seed', '0', '0'])
    monkeypatch.setitem(sys.modules, 'ray', None)  # as if ray were not installed
    assert one_error(['--backend', 'ray']) == (
        "error: --backend ray needs the optional 'ray' package: "
        "pip install -r requirements-ray.txt")
    assert not (tmp_path / 'd').exists()


def test_cli_grid_names_keep_the_flag_values(tmp_path):
    from spinup_tf.tools.cli import build_runs
    plan = build_runs('td3', ['--env', 'Pendulum-v1', 'MountainCarContinuous-v0', '--hid',
                              '[64,64]', '--pi_lr', '1e-3', '3e-4', '--act', 'relu', '--seed',
                              '0', '1', '--data_dir', str(tmp_path), '--workers', 'auto'])
    assert plan.workers >= 1 and plan.backend == 'local' and len(plan.experiments) == 8
    labels = [e.label for e in plan.experiments]
    assert labels[:4] == ['td3_envPendulum-v1_pi_lr0.001_s0', 'td3_envPendulum-v1_pi_lr0.001_s1',
                          'td3_envPendulum-v1_pi_lr0.0003_s0',
                          'td3_envPendulum-v1_pi_lr0.0003_s1']
    fn, kwargs = plan.experiments[0]
    assert kwargs['ac_kwargs'] == {'hidden_sizes': [64, 64], 'activation': 'relu'}
    assert kwargs['env_fn'].env_id == 'Pendulum-v1' and kwargs['seed'] == 0
    assert kwargs['logger_kwargs']['output_dir'] == str(
        tmp_path / 'td3_envPendulum-v1_pi_lr0.001' / 'td3_envPendulum-v1_pi_lr0.001_s0')
    plan = build_runs('td3', ['--env', 'Pendulum-v1', '--hid', '[64,64]', '[8]',
                              '--data_dir', str(tmp_path)])
    assert [e.label for e in plan.experiments] == ['td3_Pendulum-v1_hid64-64_s0',
                                                   'td3_Pendulum-v1_hid8_s0']


def test_in_process_grid_goes_on_after_a_variant_fails_at_run_time(tmp_path, capsys):
    # batch_size 2000 passes the flag and range checks, but the algorithm refuses it when it
    # starts: a replay buffer of 1000 slots cannot hold a batch of 2000.
    from spinup_tf.tools.cli import main
    code = main(['td3', '--env', 'Pendulum-v1', *TINY[2:], '--epochs', '1', '--hid', '[8]',
                 '--replay_size', '1000', '--batch_size', '2000', '16',
                 '--data_dir', str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 1
    assert 'error: batch_size (2000) is larger than the replay buffer can hold' in captured.err
    assert 'Grid summary: 1 of 2 variants ok, 1 failed' in captured.out
    assert 'td3_Pendulum-v1_batch_size2000_s0: UserInputError: batch_size' in captured.out
    assert not (tmp_path / 'td3_Pendulum-v1_batch_size2000').exists()
    assert (tmp_path / 'td3_Pendulum-v1_batch_size16' / 'td3_Pendulum-v1_batch_size16_s0' /
            'progress.txt').exists()


def test_a_grid_with_a_value_out_of_range_starts_no_variant(tmp_path, capsys):
    from spinup_tf.tools.cli import main
    code = main(['td3', '--env', 'Pendulum-v1', *TINY[2:], '--epochs', '1', '0', '--hid', '[8]',
                 '--data_dir', str(tmp_path)])
    assert code == 2
    assert 'error: --epochs must be an integer >= 1, got 0' in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def _assert_complete(run):
    assert {'progress.txt', 'config.json', 'tf1_save'} <= set(os.listdir(run)), run
    assert len((run / 'progress.txt').read_text().splitlines()) == 2  # header + one epoch
    assert (run / 'tf1_save' / 'model_info.json').exists()


def test_four_variants_with_two_workers(tmp_path):
    proc = run_cli('td3', '--env', 'Pendulum-v1', '--seed', '0', '1', '--hid', '[8]', '[16]',
                   *TINY, '--data_dir', tmp_path, '--workers', '2')
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for hid in ('8', '16'):
        for seed in (0, 1):
            name = 'td3_Pendulum-v1_hid' + hid
            _assert_complete(tmp_path / name / ('%s_s%d' % (name, seed)))
            assert '[%s_s%d] ' % (name, seed) in proc.stdout
    assert 'Grid summary: 4 of 4 variants ok' in proc.stdout
    assert proc.stdout.count('[grid] threads: ') == 1
    assert '[grid] threads: 2 runs at once on ' in proc.stdout
    summary = proc.stdout[proc.stdout.index('Grid summary'):]
    rows = [l.split() for l in summary.splitlines() if l.startswith('td3_Pendulum-v1_hid')]
    assert len(rows) == 4 and all(r[1] == 'ok' for r in rows), summary
    for r in rows:  # the performance column is the run's last AverageTestEpRet
        assert float(r[4]) == pytest.approx(final_performance(r[5])[0], abs=0.005)
        assert final_performance(r[5])[1] == 'AverageTestEpRet'
    assert 'performance: the last row\'s AverageTestEpRet of each progress.txt' in summary


def test_ray_backend_on_a_local_instance(tmp_path):
    pytest.importorskip('ray', reason='the optional ray package is not installed '
                                      '(pip install -r requirements-ray.txt)')
    proc = run_cli('td3', '--env', 'Pendulum-v1', '--seed', '0', '1', '--hid', '[8]', *TINY,
                   '--data_dir', 'rel_data', '--backend', 'ray', cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for seed in (0, 1):  # a relative --data_dir is the driver's, wherever the tasks run
        _assert_complete(tmp_path / 'rel_data' / 'td3_Pendulum-v1' /
                         ('td3_Pendulum-v1_s%d' % seed))
    assert 'Grid summary: 2 of 2 variants ok' in proc.stdout
