"""``run.py plot --ci``: bootstrap bands instead of +-1 std (spinup_tf.tools.plot, stats)."""
import os

os.environ['MPLBACKEND'] = 'Agg'

import numpy as np
import pytest

from spinup_tf.tools import plot
from spinup_tf.tools.plot import find_runs, main, plot_value
from test_plot import make_run


def band_of(fig):
    """``(low, high)`` of the first shaded band of ``fig`` (its polygon's edges)."""
    ax = fig.axes[0]
    poly = [c for c in ax.collections if c.get_paths()][0]
    verts = poly.get_paths()[0].vertices
    n = (len(verts) - 1) // 2  # fill_between: the lower edge forward, the upper back
    return verts[1:n, 1], verts[n + 1:-1, 1][::-1]


def test_ci_band_is_the_bootstrap_interval_of_the_mean_not_the_std(tmp_path):
    for seed, offset in enumerate((0.0, 3.0, 12.0)):
        make_run(tmp_path, 'exp', seed, epochs=4, offset=offset)
    runs = find_runs([str(tmp_path)])
    y = np.array([[10.0 * e + o for e in range(4)] for o in (0.0, 3.0, 12.0)])
    std_fig = plot_value(runs, 'TotalEnvInteracts', 'Performance')
    ci_fig = plot_value(runs, 'TotalEnvInteracts', 'Performance', ci=True)
    try:
        low, high = band_of(std_fig)
        std = y.std(axis=0, ddof=1)
        assert low == pytest.approx(y.mean(0) - std) and high == pytest.approx(y.mean(0) + std)
        low, high = band_of(ci_fig)
        # Three runs offset by 0, 3, 12: resample means range over sums of three of them / 3;
        # the extremes (all 0 or all 12) each have probability 1/27 > 2.5 %, so the
        # percentile interval reaches them: mean - 5 and mean + 7.
        assert low == pytest.approx(y.mean(0) - 5) and high == pytest.approx(y.mean(0) + 7)
        assert ci_fig.axes[0].get_legend().get_title().get_text() == plot.CI_LABEL
    finally:
        import matplotlib.pyplot as plt
        plt.close(std_fig)
        plt.close(ci_fig)


def test_main_with_ci_and_iqm(tmp_path, capsys):
    for seed in range(4):
        make_run(tmp_path / 'data', 'exp', seed, epochs=3, offset=seed)
    out = tmp_path / 'fig.png'
    assert main([str(tmp_path / 'data'), '--ci', '--est', 'iqm', '--save', str(out)]) == 0
    assert out.exists() and out.stat().st_size > 1000
    assert f'saved {out}' in capsys.readouterr().out
