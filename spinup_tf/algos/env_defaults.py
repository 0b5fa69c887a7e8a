"""Per-environment defaults of the algorithms, applied when no preset is given (any flag
given on the command line overrides them), with the measurements that chose them."""

ENV_DEFAULTS = {
    # Gaussian 0.1 noise leaves TD3 stuck at the "do nothing" optimum here (return ~0):
    # temporally correlated exploration of a larger scale reaches the flag.
    # Measured (seeds 0, 1, 2): TestEpRet first >= 90 at 20k, 35k, 40k steps; 92.7, 92.7,
    # 93.1 after 50k. Gaussian 0.1 (Spinning Up's default) stays near 0.
    ('td3', 'MountainCarContinuous-v0'): dict(noise='pink', act_noise=0.5,
                                              steps_per_epoch=5000, epochs=10),
}


ATARI_DEFAULTS = {
    # rl-baselines3-zoo's hyperparams/dqn.yml "atari" entry (SB3's Atari benchmark), with the
    # Nature network (its 512-unit layer after the encoder, core.nature_cnn), over 1M agent
    # steps (zoo: 10M) and whole games up to 108,000 frames (27,000 agent steps).
    'dqn': dict(replay_size=100000, lr=1e-4, batch_size=32, start_steps=100000,
                update_after=100000, target_update_interval=1000, update_every=4,
                gradient_steps=1, exploration_fraction=0.1, eps_end=0.01,
                ac_kwargs=dict(hidden_sizes=[512]), steps_per_epoch=50000, epochs=20,
                num_test_episodes=3, max_ep_len=27000),
}
"""Defaults of an algorithm on every Atari game (``utils.atari.is_atari_id``)."""


def env_defaults(algo, env_id):
    """Keyword arguments the table sets for ``algo`` on ``env_id`` (a copy; may be empty)."""
    from spinup_tf.utils.atari import is_atari_id
    if is_atari_id(env_id) and algo in ATARI_DEFAULTS:
        return dict(ATARI_DEFAULTS[algo], ac_kwargs=dict(ATARI_DEFAULTS[algo]['ac_kwargs']))
    return dict(ENV_DEFAULTS.get((algo, env_id), {}))


def describe_env_defaults(algo):
    """Lines for ``--help``: the per-env defaults of ``algo``."""
    rows = [(env, kw) for (a, env), kw in sorted(ENV_DEFAULTS.items()) if a == algo]
    if algo in ATARI_DEFAULTS:
        rows.append(('any Atari game', ATARI_DEFAULTS[algo]))
    if not rows:
        return []
    lines = ['per-environment defaults (applied unless a preset or flag says otherwise):']
    for env, kw in rows:
        lines.append('  %-26s %s' % (env, ' '.join('--%s %s' % kv for kv in kw.items())))
    return lines
