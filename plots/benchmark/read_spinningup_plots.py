#!/usr/bin/env python
"""Read Spinning Up's published benchmark curves off its own SVG figures.

``python plots/benchmark/read_spinningup_plots.py SPINNINGUP_CHECKOUT [--write]``

Spinning Up's benchmark page draws its curves from ``docs/images/plots/{tf1,pyt}/
{tensorflow,pytorch}_<env>_performance.svg`` in its repository (github.com/openai/spinningup),
each a matplotlib SVG: every curve is one ``<path>`` (the 10-seed mean, smoothed over 11
epochs), and the axes are given by the grid line of each labelled tick. This script maps each
curve's points to data coordinates with a linear fit through the tick positions and reads
every curve at 100k, 300k, 1M and 3M steps by linear interpolation.

It also reads each curve's shaded band (± one standard deviation over Spinning Up's seeds).
It prints both readings: the TF1 one next to ``spinningup_tf1.json`` (the table of issue 17,
read off the same figures), which checks the method, and the PyTorch one. ``--write`` stores
the PyTorch means as ``plots/benchmark/spinningup_pytorch.json``, a second reference for
``plots/benchmark.py``, and the standard deviations as ``spinningup_spread.json``. (Spinning
Up's PyTorch implementations differ from its TF1 ones: e.g. its PyTorch on-policy loop
bootstraps at the time limit, where its TF1 loop's ``last_val = 0 if d`` does not, since old
gym's TimeLimit returned ``d = True`` there.)
"""
import argparse
import json
import os.path as osp
import re
import subprocess
import sys

import numpy as np

HERE = osp.dirname(osp.abspath(__file__))
CHECKPOINTS = (100000, 300000, 1000000, 3000000)
ENVS = {'HalfCheetah': 'halfcheetah', 'Hopper': 'hopper', 'Walker2d': 'walker2d', 'Ant': 'ant'}
FIGURES = {'tf1': 'docs/images/plots/tf1/tensorflow_%s_performance.svg',
           'pytorch': 'docs/images/plots/pyt/pytorch_%s_performance.svg'}

TICK = re.compile(r'<g id="([xy])tick_\d+">\s*<g id="line2d_\d+">\s*<path[^>]*?'
                  r'd="M ([-\d.]+) ([-\d.]+)')  # a tick's grid line: where its value is
CURVE = re.compile(r'<g id="line2d_\d+">\s*<path[^>]*?\sd="([^"]*)"[^>]*?'
                   r'style="[^"]*?stroke:\s*(#[0-9a-fA-F]+)')
LEGEND = re.compile(r'stroke:\s*(#[0-9a-fA-F]+)[^"]*"/>\s*</g>\s*(?:<g id="line2d_\d+"/>\s*)?'
                    r'<g id="text_\d+">\s*<!-- (.*?) -->')  # a legend's line, then its label
BAND = re.compile(r'<g id="(?:FillBetween)?PolyCollection_\d+">')  # a fill_between
MILLIONS = re.compile(r'<!-- (1e6|\$\\times\s*10\^\{6\}\$) -->')  # the x axis' offset text


def _axes(text):
    """``(to_data, labels)``: a function mapping SVG points (n, 2) to (steps, values), and
    ``{colour: legend label}``."""
    ticks = {'x': [], 'y': []}
    for m in TICK.finditer(text):
        axis, px, py = m.group(1), float(m.group(2)), float(m.group(3))
        label = re.search(r'<!-- (.*?) -->', text[m.end():m.end() + 600]).group(1)
        ticks[axis].append((px if axis == 'x' else py, float(label.replace('\u2212', '-'))))
    x_unit = 1e6 if MILLIONS.search(text) else 1.0
    to_x = np.polyfit(*zip(*ticks['x']), 1)
    to_y = np.polyfit(*zip(*ticks['y']), 1)

    def to_data(points):
        return np.polyval(to_x, points[:, 0]) * x_unit, np.polyval(to_y, points[:, 1])
    return to_data, {color.lower(): label for color, label in LEGEND.findall(text)}


def _points(path):
    return np.array(re.findall(r'[ML] ([-\d.]+) ([-\d.]+)', path), float)


def read_svg(text):
    """``{label: (steps, values)}`` of every curve in one matplotlib SVG figure."""
    to_data, labels = _axes(text)
    curves = {}
    for path, color in CURVE.findall(text):
        points = _points(path)
        if len(points) > 20 and color.lower() in labels:  # a curve, not a tick or grid line
            curves[labels[color.lower()]] = to_data(points)
    return curves


def read_bands(text):
    """``{label: (steps, upper, lower)}`` of every shaded band (``fill_between``: Spinning
    Up's ± one standard deviation over seeds) in one matplotlib SVG figure. A band's path runs
    along one edge to its last step and back along the other."""
    to_data, labels = _axes(text)
    bands = {}
    for m in BAND.finditer(text):
        # the band's path, with its style; newer matplotlib puts it in <defs> and draws it
        # with a <use x= y=> that shifts it
        chunk = text[m.end():m.end() + 200000]
        path = re.search(r'<path[^>]*?\sd="([^"]*)"', chunk)
        rest = chunk[path.end():path.end() + 600]
        color = re.search(r'(?:fill|stroke):\s*(#[0-9a-fA-F]+)', rest)
        shift = re.search(r'<use [^>]*?x="([-\d.]+)" y="([-\d.]+)"', rest)
        points = _points(path.group(1))
        if shift:
            points = points + [float(shift.group(1)), float(shift.group(2))]
        if color is None or color.group(1).lower() not in labels or len(points) < 4:
            continue
        steps, values = to_data(points)
        turn = int(np.argmax(steps))
        there, back = slice(0, turn + 1), slice(len(steps) - 1, turn, -1)
        grid = steps[there]
        other = np.interp(grid, steps[back], values[back])
        bands[labels[color.group(1).lower()]] = (grid, np.maximum(values[there], other),
                                                 np.minimum(values[there], other))
    return bands


def stds_at_checkpoints(band):
    """Half the band's width at each checkpoint: the standard deviation over seeds."""
    steps, upper, lower = band
    return [int(round(float(np.interp(c, steps, upper) - np.interp(c, steps, lower)) / 2))
            for c in CHECKPOINTS]


def values_at_checkpoints(curve):
    steps, values = curve
    return [int(round(float(np.interp(c, steps, values)))) for c in CHECKPOINTS]


def figure_text(checkout, relpath):
    """A figure from a checkout: a work tree, or a bare git directory (read at HEAD)."""
    path = osp.join(checkout, relpath)
    if osp.exists(path):
        with open(path) as f:
            return f.read()
    return subprocess.run(['git', '--git-dir', checkout, 'show', 'HEAD:' + relpath],
                          check=True, capture_output=True, text=True).stdout


def write_json(name, data):
    text = json.dumps(data, indent=1)
    text = re.sub(r'\[\s+([-\d,\s]+?)\s+\]',  # one line per curve
                  lambda m: '[%s]' % ', '.join(m.group(1).replace(',', ' ').split()), text)
    with open(osp.join(HERE, name), 'w') as f:
        f.write(text + '\n')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('checkout', help='a clone of github.com/openai/spinningup (a work '
                        'tree, or its git directory)')
    parser.add_argument('--write', action='store_true', help='store the readings in '
                        'spinningup_pytorch.json and spinningup_spread.json')
    args = parser.parse_args(argv)
    with open(osp.join(HERE, 'spinningup_tf1.json')) as f:
        tf1_table = json.load(f)['values']
    means = {kind: {} for kind in FIGURES}
    stds = {kind: {} for kind in FIGURES}
    for kind, pattern in FIGURES.items():
        for env, name in ENVS.items():
            try:
                text = figure_text(args.checkout, pattern % name)
            except (OSError, subprocess.CalledProcessError):
                print('error: no %s in %s' % (pattern % name, args.checkout), file=sys.stderr)
                return 2
            means[kind][env] = {algo: values_at_checkpoints(c)
                                for algo, c in sorted(read_svg(text).items())}
            stds[kind][env] = {algo: stds_at_checkpoints(b)
                               for algo, b in sorted(read_bands(text).items())}
    print('env algo: TF1 read here (std over seeds) / TF1 in spinningup_tf1.json; PyTorch')
    for env in ENVS:
        for algo, tf1 in means['tf1'][env].items():
            print('%-11s %-4s %-26s (%s) / %-26s; %s' % (
                env, algo, tf1, stds['tf1'][env].get(algo), tf1_table.get(env, {}).get(algo, '-'),
                means['pytorch'][env].get(algo, '-')))
    if args.write:
        how = ('read off docs/images/plots/{tf1,pyt}/<...>_<env>_performance.svg of '
               'github.com/openai/spinningup by plots/benchmark/read_spinningup_plots.py '
               '(linear interpolation of the plotted curve, axes from the tick grid lines). '
               'Spinning Up ran MuJoCo -v3 envs; this project runs -v5.')
        write_json('spinningup_pytorch.json', {
            'source': 'Spinning Up benchmark page, PyTorch curves: 10-seed means ' + how,
            'checkpoints': list(CHECKPOINTS), 'values': means['pytorch']})
        write_json('spinningup_spread.json', {
            'source': 'Spinning Up benchmark page: the standard deviation over its 10 seeds '
                      '(half the width of the shaded band) of each curve, ' + how,
            'checkpoints': list(CHECKPOINTS), 'tf1': stds['tf1'], 'pytorch': stds['pytorch']})
    return 0


if __name__ == '__main__':
    sys.exit(main())
