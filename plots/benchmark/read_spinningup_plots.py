#!/usr/bin/env python
"""Read Spinning Up's published benchmark curves off its own SVG figures.

``python plots/benchmark/read_spinningup_plots.py SPINNINGUP_CHECKOUT [--write]``

Spinning Up's benchmark page draws its curves from ``docs/images/plots/{tf1,pyt}/
{tensorflow,pytorch}_<env>_performance.svg`` in its repository (github.com/openai/spinningup),
each a matplotlib SVG: every curve is one ``<path>`` (the 10-seed mean, smoothed over 11
epochs), and the axes are given by the grid line of each labelled tick. This script maps each
curve's points to data coordinates with a linear fit through the tick positions and reads
every curve at 100k, 300k, 1M and 3M steps by linear interpolation.

It prints both readings: the TF1 one next to ``spinningup_tf1.json`` (the table of issue 17,
read off the same figures), which checks the method, and the PyTorch one. ``--write`` stores
the PyTorch reading as ``plots/benchmark/spinningup_pytorch.json``, a second reference for
``plots/benchmark.py`` (Spinning Up's PyTorch implementations differ from its TF1 ones, e.g.
its PyTorch on-policy loop bootstraps at the time limit where its TF1 loop does not).
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
CURVE = re.compile(r'<g id="line2d_\d+">\s*<path[^>]*?d="([^"]*)"[^>]*?'
                   r'style="[^"]*?stroke:\s*(#[0-9a-fA-F]+)')
LEGEND = re.compile(r'stroke:\s*(#[0-9a-fA-F]+)[^"]*"/>\s*</g>\s*(?:<g id="line2d_\d+"/>\s*)?'
                    r'<g id="text_\d+">\s*<!-- (.*?) -->')  # a legend's line, then its label
MILLIONS = re.compile(r'<!-- (1e6|\$\\times\s*10\^\{6\}\$) -->')  # the x axis' offset text


def read_svg(text):
    """``{label: (steps, values)}`` of every curve in one matplotlib SVG figure."""
    ticks = {'x': [], 'y': []}
    for m in TICK.finditer(text):
        axis, px, py = m.group(1), float(m.group(2)), float(m.group(3))
        label = re.search(r'<!-- (.*?) -->', text[m.end():m.end() + 600]).group(1)
        ticks[axis].append((px if axis == 'x' else py, float(label.replace('\u2212', '-'))))
    x_unit = 1e6 if MILLIONS.search(text) else 1.0
    to_x = np.polyfit(*zip(*ticks['x']), 1)
    to_y = np.polyfit(*zip(*ticks['y']), 1)
    labels = {color.lower(): label for color, label in LEGEND.findall(text)}
    curves = {}
    for path, color in CURVE.findall(text):
        points = np.array(re.findall(r'[ML] ([-\d.]+) ([-\d.]+)', path), float)
        if len(points) > 20 and color.lower() in labels:  # a curve, not a tick or grid line
            curves[labels[color.lower()]] = (np.polyval(to_x, points[:, 0]) * x_unit,
                                             np.polyval(to_y, points[:, 1]))
    return curves


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('checkout', help='a clone of github.com/openai/spinningup')
    parser.add_argument('--write', action='store_true',
                        help='store the PyTorch reading in spinningup_pytorch.json')
    args = parser.parse_args(argv)
    with open(osp.join(HERE, 'spinningup_tf1.json')) as f:
        tf1_table = json.load(f)['values']
    readings = {kind: {} for kind in FIGURES}
    for kind, pattern in FIGURES.items():
        for env, name in ENVS.items():
            try:
                text = figure_text(args.checkout, pattern % name)
            except (OSError, subprocess.CalledProcessError):
                print('error: no %s in %s' % (pattern % name, args.checkout), file=sys.stderr)
                return 2
            readings[kind][env] = {algo: values_at_checkpoints(c)
                                   for algo, c in sorted(read_svg(text).items())}
    print('env algo: TF1 read here / TF1 in spinningup_tf1.json; PyTorch read here')
    for env in ENVS:
        for algo, tf1 in readings['tf1'][env].items():
            print('%-11s %-4s %-26s / %-26s; %s' % (
                env, algo, tf1, tf1_table.get(env, {}).get(algo, '-'),
                readings['pytorch'][env].get(algo, '-')))
    if args.write:
        out = {'source': 'Spinning Up benchmark page, PyTorch curves: 10-seed means read off '
                         'docs/images/plots/pyt/pytorch_<env>_performance.svg of '
                         'github.com/openai/spinningup by '
                         'plots/benchmark/read_spinningup_plots.py (linear interpolation of '
                         'the plotted curve, axes from the tick grid lines). Spinning Up ran '
                         'MuJoCo -v3 envs; this project runs -v5.',
               'checkpoints': list(CHECKPOINTS), 'values': readings['pytorch']}
        text = json.dumps(out, indent=1)
        text = re.sub(r'\[\s+([-\d,\s]+?)\s+\]',  # one line per curve
                      lambda m: '[%s]' % ', '.join(m.group(1).replace(',', ' ').split()), text)
        with open(osp.join(HERE, 'spinningup_pytorch.json'), 'w') as f:
            f.write(text + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
