"""Presets build the seeds' graphs and schedules (CLI-level preset tests are in test_cli.py)."""
import numpy as np
import gymnasium as gym
from gymnasium.spaces import Box

from spinup_tf.utils.tf1 import tf, get_trainable_vars, count_vars, make_session
from spinup_tf.reproductions.presets import PRESETS, get_preset
from spinup_tf.tools.env_defaults import env_defaults
from spinup_tf.reproductions.hooks import NormalizeRewards
from test_offpolicy_loop import _run, LineEnv
from offpolicy_graphs import capture

OBS, ACT = 3, 1
SPACE = Box(-2.0, 2.0, shape=(ACT,), dtype=np.float32)


def _linear_params(sizes):
    return sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:]))


def _preset_graph(monkeypatch, tmp_path, algo, preset, **kwargs):
    p = PRESETS[algo][preset]
    return capture(monkeypatch, tmp_path, algo, actor_critic=p.kwargs['actor_critic'],
                   ac_kwargs=kwargs.pop('ac_kwargs', p.kwargs.get('ac_kwargs')), **kwargs)


def test_udemy_graph_scopes_and_sizes(monkeypatch, tmp_path):
    g = _preset_graph(monkeypatch, tmp_path, 'td3', 'udemy')
    with g.run.graph.as_default():
        names = [v.op.name for v in get_trainable_vars('main')]
        assert names[:6] == ['main/pi/l1/kernel', 'main/pi/l1/bias', 'main/pi/l2/kernel',
                             'main/pi/l2/bias', 'main/pi/l3/kernel', 'main/pi/l3/bias']
        assert {n.split('/')[2] for n in names if n.startswith('main/critic/')} == {'q1', 'q2'}
        assert count_vars('main/pi') == _linear_params([OBS, 400, 300, ACT])
        assert count_vars('main/critic') == 2 * _linear_params([OBS + ACT, 400, 300, 1])
        assert count_vars('target') == count_vars('main')
        if True:
            k1, b1 = g.sess.run(get_trainable_vars('main/pi/l1'))
            bound = 1 / np.sqrt(OBS)  # PyTorch nn.Linear: U(+-1/sqrt(fan_in)), bias too
            assert np.abs(k1).max() <= bound and np.abs(b1).max() <= bound
            assert np.abs(b1).max() > 0


def test_tensorlayer_graph_sizes_and_init(monkeypatch, tmp_path):
    g = _preset_graph(monkeypatch, tmp_path, 'td3', 'tensorlayer', action_range=1.0)
    with g.run.graph.as_default():
        assert count_vars('main/pi') == _linear_params([OBS, 32, 32, 32, ACT])
        assert count_vars('main/q1') == count_vars('main/q2') == _linear_params([OBS + ACT, 32,
                                                                                   32, 1])
        if True:
            sess = g.sess
            for v, val in zip(get_trainable_vars('main'), sess.run(get_trainable_vars('main'))):
                assert np.abs(val).max() <= 3e-3 + 1e-9, v.op.name
            out_bias = sess.run([v for v in get_trainable_vars('main/pi')
                                 if v.op.name.endswith('dense_3/bias')][0])
            assert np.abs(out_bias).max() > 0  # the output bias is uniform too


def test_tensorlayer_action_range_quirk_limits_the_policy(monkeypatch, tmp_path):
    g = _preset_graph(monkeypatch, tmp_path, 'td3', 'tensorlayer', action_range=1.0,
                      ac_kwargs=dict(hidden_sizes=(32, 32), init_w=1.0))
    pi = g.sess.run(g.act, {g.batch['obs1']: 100 * np.random.RandomState(0).randn(200, OBS)})
    assert np.abs(pi).max() <= 1.0 and np.abs(pi).max() > 0.9
    # Without the quirk the policy uses Pendulum's bounds [-2, 2].
    g = _preset_graph(monkeypatch, tmp_path / 'off', 'td3', 'tensorlayer',
                      ac_kwargs=dict(hidden_sizes=(32, 32), init_w=1.0))
    pi = g.sess.run(g.act, {g.batch['obs1']: 100 * np.random.RandomState(0).randn(200, OBS)})
    assert np.abs(pi).max() > 1.9


def test_rllab_graph_concatenates_the_action_late(monkeypatch, tmp_path):
    g = _preset_graph(monkeypatch, tmp_path, 'ddpg', 'rllab-mxnet', ac_kwargs={})
    with g.run.graph.as_default():
        shapes = {v.op.name: v.shape.as_list() for v in get_trainable_vars('main/q')}
        assert shapes['main/q/dense/kernel'] == [OBS, 32]
        assert shapes['main/q/dense_1/kernel'] == [32, 32]
        assert shapes['main/q/dense_2/kernel'] == [32 + ACT, 32]
        assert shapes['main/q/dense_3/kernel'] == [32, 1]
        assert count_vars('main/pi') == _linear_params([OBS, 32, 32, ACT])
        if True:
            k = np.concatenate([x.ravel() for x in g.sess.run(get_trainable_vars('main'))
                                if x.ndim == 2])
            assert 0.008 < k.std() < 0.012  # N(0, 0.01)


def test_rllab_q_network_sees_actions_normalised_to_unit_range():
    """rllab's normalize(env): Q(x, a) in env units is the network on a / half_range (2 on
    this space), the same network that unit_actions=False feeds with a itself; q_pi is Q at
    the policy's own action."""
    from spinup_tf.reproductions.networks import rllab_ddpg_actor_critic
    rng = np.random.RandomState(0)
    x_val = rng.randn(64, OBS).astype(np.float32)
    a_val = rng.uniform(-2, 2, size=(64, ACT)).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, (None, OBS))
        a = tf.placeholder(tf.float32, (None, ACT))
        with tf.variable_scope('unit'):
            pi, q, q_pi = rllab_ddpg_actor_critic(x, a, action_space=SPACE, init_std=0.3)
        with tf.variable_scope('env'):
            _, q_env, _ = rllab_ddpg_actor_critic(x, a, action_space=SPACE, init_std=0.3,
                                                  unit_actions=False)
        sess = make_session()
        sess.run(tf.global_variables_initializer())
        sess.run([tf.assign(e, u) for u, e in zip(get_trainable_vars('unit'),
                                                  get_trainable_vars('env'))])
        got, same = sess.run([q, q_env], {x: x_val, a: a_val})
        _, as_unit = sess.run([q, q_env], {x: x_val, a: a_val / 2.0})
        np.testing.assert_allclose(got, as_unit, rtol=1e-5, atol=1e-6)
        assert np.abs(got - same).max() > 1e-3  # env units would be another function
        pi_val, q_pi_val = sess.run([pi, q_pi], {x: x_val})
        assert np.abs(pi_val).max() <= 2.0 and np.abs(pi_val).max() > 1.0
        np.testing.assert_allclose(q_pi_val, sess.run(q, {x: x_val, a: pi_val}), rtol=1e-5,
                                   atol=1e-6)


def test_reward_normalisation_by_hand():
    r = np.array([1.0, 2.0, 3.0, 10.0], dtype=np.float32)
    expected = (r - r.mean()) / (r.std() + 1e-6)
    with tf.Graph().as_default():
        batch = NormalizeRewards.transform_batch(dict(rews=tf.constant(r), obs1=1))
        got = make_session().run(batch['rews'])
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert abs(got.mean()) < 1e-6 and abs(got.std() - 1) < 1e-5


def test_tensorlayer_schedule_three_updates_per_step(tmp_path):
    # update_every=1 with 3 updates per step: every step after update_after runs 3 updates.
    _, calls = _run(tmp_path, lambda: LineEnv(), steps=10, update_every=1, update_after=4,
                    updates_per_step=3)
    assert len(calls) == 3 * 6  # steps t = 4..9
    assert [c[1] for c in calls[:3]] == [0, 1, 2]


def test_udemy_schedule_updates_equal_episode_steps(tmp_path):
    env_fn = lambda: gym.wrappers.TimeLimit(LineEnv(terminate_at=4), max_episode_steps=50)  # noqa
    _, calls = _run(tmp_path, env_fn, steps=12, update_at_episode_end=True)
    assert len(calls) == 12 and [c[0] for c in calls[::4]] == [4, 8, 12]


def test_presets_and_env_defaults_tables():
    assert set(PRESETS['td3']) == {'blog-mountaincar', 'udemy', 'tensorlayer'}
    assert set(PRESETS['ddpg']) == {'seed-000', 'rllab-mxnet'}
    assert get_preset('npg', 'blog-cartpole').env == 'CartPole-v1'
    assert env_defaults('td3', 'MountainCarContinuous-v0')['noise'] in ('pink', 'ou')
    assert env_defaults('td3', 'Pendulum-v1') == {}


def test_tensorlayer_phase_puts_the_policy_step_on_every_third_update(monkeypatch, tmp_path):
    """Seed 003 increments its counter before testing it: with update_count_from=1 the
    policy step (with the targets) runs on updates 3, 6, 9 of a window, not 1, 4, 7; its
    loss is stored exactly then, and the policy's weights move exactly then."""
    from spinup_tf.loops.off_policy import plain_updates
    from spinup_tf.reproductions.hooks import make_hooks
    from spinup_tf.loops.replay_buffer import ReplayBuffer
    from offpolicy_graphs import weights
    for start, expected in ((1, [3, 6, 9]), (0, [1, 4, 7])):
        g = capture(monkeypatch, tmp_path / str(start), 'td3', policy_delay=3)
        update = make_hooks(update_count_from=start).update_schedule(g.update)
        buf = ReplayBuffer(3, 1, 64)
        rng = np.random.RandomState(0)
        for _ in range(40):
            buf.store(rng.randn(3), rng.uniform(-2, 2, 1), rng.randn(), rng.randn(3), 0.0)
        events = []

        class Log:
            def store(self, **kw):
                if 'LossQ' in kw:
                    events.append(['q', weights(g, 'main/pi')])
                if 'LossPi' in kw:
                    events.append(['pi', weights(g, 'main/pi')])
        first = weights(g, 'main/pi')
        plain_updates(g.sess, g.lists, update, g.batch, buf, 16, Log())(9)
        updates, with_pi, moved, last = 0, [], [], first
        for kind, pi_after in events:
            if kind == 'q':
                updates += 1
            else:
                with_pi.append(updates)
            if any(np.any(a != b) for a, b in zip(last, pi_after)):
                moved.append(updates)
            last = pi_after
        assert with_pi == expected and moved == expected, (start, with_pi, moved)


def _algo_of(name):
    return next(a for a in PRESETS if name in PRESETS[a])


def test_every_quirk_is_on_in_its_preset_and_spinning_ups_in_the_fixed_variant():
    """NAME sets each quirk's flags to the seed's values; NAME-fixed to the values a plain
    run has (Spinning Up's), everything else as NAME."""
    from spinup_tf.reproductions.presets import QUIRKS, preset_names
    from spinup_tf.tools.cli import resolve_defaults
    assert set(QUIRKS) == {n for a in PRESETS for n in PRESETS[a]}
    for name, quirks in QUIRKS.items():
        algo = _algo_of(name)
        seed, fixed = get_preset(algo, name), get_preset(algo, name + '-fixed')
        assert name + '-fixed' in preset_names(algo) and fixed.env == seed.env
        plain = resolve_defaults(algo, None)  # the signature's defaults, no per-env table
        changed = set()
        for q in quirks:
            assert q.seed.keys() == q.fixed.keys() and q.source.startswith('seed 00')
            for flag, value in q.seed.items():
                assert seed.kwargs[flag] == value != q.fixed[flag], (name, flag)
                assert fixed.kwargs[flag] == q.fixed[flag] == plain[flag], (name, flag)
                changed.add(flag)
        assert {k: v for k, v in fixed.kwargs.items() if k not in changed} == \
            {k: v for k, v in seed.kwargs.items() if k not in changed}


def test_docs_list_every_quirk_with_its_seed_line_and_flags():
    """The docs' quirk table (docs/reproductions/index.md, as the site's build hook makes
    it) is the one ``quirk_table()`` makes from ``QUIRKS``, with a row per quirk naming the
    seed's lines and both variants' flags. (It was the README's table before the README
    became one screen; the rows are now generated, and each preset's page has its own.)"""
    import importlib.util
    import os
    from spinup_tf.reproductions.presets import QUIRKS, quirk_table
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location(
        'spinup_docs', os.path.join(root, 'docs', 'hooks', 'spinup_docs.py'))
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    source = open(os.path.join(root, 'docs', 'reproductions', 'index.md')).read()
    page = '\n'.join(hook.unescape_text_pipes(line)
                     for line in hook.expand(source).splitlines())
    table = quirk_table()
    assert table in page
    rows = table.splitlines()[2:]
    assert len(rows) == sum(len(q) for q in QUIRKS.values())
    for (name, q), row in zip([(n, q) for n, qs in QUIRKS.items() for q in qs], rows):
        assert row.startswith('| %s | %s' % (name, q.source))
        for flag in q.seed:
            assert '--' + flag in row, (name, flag)


def test_fixed_preset_run_names_its_folder_and_records_preset_and_quirks(tmp_path):
    """The plan of ``run.py trpo --preset blog-cartpole-fixed``: the folder is named after
    the preset, the preset name goes to config.json (through logger_kwargs, as for
    test_overwrite.py's preset run) and the quirk flags are at their fixed values."""
    from spinup_tf.tools.cli import build_runs
    plan = build_runs('trpo', ['--preset', 'blog-cartpole-fixed', '--data_dir', str(tmp_path)])
    (e,) = plan.experiments
    assert e.kwargs['logger_kwargs']['output_dir'].endswith(
        'trpo_blog-cartpole-fixed_CartPole-v1/trpo_blog-cartpole-fixed_CartPole-v1_s0')
    assert e.kwargs['logger_kwargs']['preset'] == 'blog-cartpole-fixed'
    assert (e.kwargs['reward_lag'], e.kwargs['bootstrap_with_reward'],
            e.kwargs['timeout_is_terminal']) == (False, False, False)


def _pendulum_v0_step(th, thdot, u, g=10.0, m=1.0, l=1.0, dt=0.05):
    """Old gym's Pendulum-v0 ``step`` (the env seed 003 names, line 78): the angle moves
    with the new speed *before* the speed is clipped to +-8."""
    u = np.clip(u, -2.0, 2.0)[0]
    cost = (((th + np.pi) % (2 * np.pi)) - np.pi) ** 2 + 0.1 * thdot ** 2 + 0.001 * u ** 2
    newthdot = thdot + (-3 * g / (2 * l) * np.sin(th + np.pi) + 3.0 / (m * l ** 2) * u) * dt
    newth = th + newthdot * dt
    return newth, np.clip(newthdot, -8, 8), -cost


def test_pendulum_v1_is_v0_but_where_the_speed_clip_binds():
    """What seed-003.md says of Pendulum-v0 (seed 003) against gymnasium's Pendulum-v1:
    the same reward, observation bounds, reset distribution and 200-step limit; the same
    dynamics except at the steps where the speed reaches the +-8 clip (v1 clips it before
    moving the angle)."""
    import gymnasium as gym
    env = gym.make('Pendulum-v1')
    assert env.spec.max_episode_steps == 200
    np.testing.assert_array_equal(env.observation_space.high, [1.0, 1.0, 8.0])
    core = env.unwrapped
    rng = np.random.RandomState(0)
    clipped = 0
    for _ in range(2000):
        th, thdot = rng.uniform(-np.pi, np.pi), rng.uniform(-8, 8)
        u = rng.uniform(-3, 3, 1)
        core.state = np.array([th, thdot])
        _, reward, _, _, _ = core.step(u)
        th0, thdot0, reward0 = _pendulum_v0_step(th, thdot, u)
        assert np.isclose(reward, reward0) and np.isclose(core.state[1], thdot0)
        binds = abs(thdot + (15 * np.sin(th) + 3 * np.clip(u[0], -2, 2)) * 0.05) > 8
        assert np.isclose(core.state[0], th0) != binds
        clipped += binds
    assert 0 < clipped < 2000
    starts = np.array([env.reset(seed=s)[0] for s in range(200)])
    assert np.all(np.abs(starts[:, 2]) <= 1.0) and starts[:, 0].min() < -0.9  # v0's reset
