"""Command line: ``python run.py ALGO --env ENV_ID [--kwarg VALUE ...]``, ``plot``, ``test_policy``.

Spinning Up's conventions:

* every keyword argument of the algorithm is a flag (``--epochs 5``, ``--pi_lr 3e-4``);
* ``--hid "[256,256]"`` and ``--act relu`` fill ``ac_kwargs`` (hidden sizes, activation);
* ``--exp_name``, ``--data_dir`` (default ``./data``), ``--datestamp`` choose the run folder
  ``DATA_DIR/EXP_NAME/EXP_NAME_s{seed}/``;
* several values after a flag make a grid (``--seed 0 10 20``; ``spinup_tf.tools.grid``), run one
  variant after the other, or ``--workers N`` at once in separate processes, or as Ray tasks
  with ``--backend ray [--address ADDR]``; a summary table ends a grid run;
* values are parsed with ``ast.literal_eval`` (never ``eval``); what does not parse is a string.
"""
import signal
import sys

from spinup_tf.algos import ALGOS, LOOPS, algo_docstring, option_help, parameters
from spinup_tf.tools.env_defaults import describe_env_defaults
from spinup_tf.utils.errors import UserInputError, DiskFullError
from spinup_tf.utils.flags import ACTIVATIONS
from spinup_tf.utils.signals import Terminated, install_stop_handlers
from spinup_tf.tools.launch import announce, run_experiments
from spinup_tf.tools.ray_backend import RayStartError
from spinup_tf.tools.plan import (  # noqa: F401 (build_runs, resolve_defaults: run.py's API)
    NOT_FLAGS, build_runs, resolve_defaults, _describe_presets)

SUBCOMMANDS = ('plot', 'test_policy', 'resume', 'tune')
USAGE = """usage:
  python run.py ALGO --env ENV_ID [--flag VALUE ...]   train (ALGO: {algos})
  python run.py ALGO --preset NAME [--flag VALUE ...]  a source document's configuration
  python run.py ALGO --help                            the algorithm's flags and docstring
  python run.py plot DIR [DIR ...] [--save FILE] ...   learning curves
  python run.py test_policy DIR [--episodes N] [--len L] [--norender]
  python run.py resume DIR                             continue a killed or interrupted run
  python run.py tune ALGO --env ENV_ID --trials N      hyperparameter search (Optuna)

The same commands: spinup-tf ... (the console script of pip install -e .) or
python -P -m spinup_tf ... . For folders from elsewhere (a download, a shared disk) use one of
those two, or python /path/to/run.py: plain python -m spinup_tf puts the working directory
first on Python's path, so inside such a folder it would import a spinup_tf/ planted there
(docs/user-guide/reliability.md).
"""
RESUME_HELP = """usage: python run.py resume RUN_DIR

Continue a killed or interrupted run from its folder: the algorithm, its hyperparameters,
the env id and its keyword arguments come from RUN_DIR/config.json, the state from
RUN_DIR/checkpoint/ (written every save_freq epochs, at the last one and on Ctrl-C).
Progress rows are appended to RUN_DIR/progress.txt after the rows the checkpoint covers.

For a folder from elsewhere: spinup-tf resume RUN_DIR (or python -P -m spinup_tf resume
RUN_DIR), not python -m spinup_tf from inside it (docs/user-guide/reliability.md)."""


def main(argv=None):
    """Entry point; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(argv)
    except UserInputError as e:
        print('error: %s' % e, file=sys.stderr)
        return 2
    except FloatingPointError as e:
        print('error: %s' % e, file=sys.stderr)
        return 1
    except DiskFullError as e:
        print('error: %s' % e, file=sys.stderr)
        return 1
    except OSError as e:  # before or around a run: a folder that cannot be written, a full disk
        import errno
        what = 'no space left on device' if e.errno == errno.ENOSPC else \
            (e.strerror or str(e)).lower()
        print('error: cannot write %s: %s' % (e.filename or 'the run folder', what),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # Terminated (SIGTERM) too
        if argv[:1] in (['plot'], ['test_policy']):  # nothing of a run to report
            print('%s: %s' % (argv[0], 'terminated' if isinstance(e, Terminated)
                              else 'interrupted'), file=sys.stderr)
        else:
            print(interrupt_message(e), file=sys.stderr)
        return 143 if isinstance(e, Terminated) else 130


def interrupt_message(e):
    """What a stopped run left, said truly: ``run_loop`` tags the interrupt with the run
    folder and the epochs logged; an untagged one came before training (or in a grid, whose
    workers report their own runs)."""
    word = 'terminated' if isinstance(e, Terminated) else 'interrupted'
    folder = getattr(e, 'run_folder', None)
    if folder is None:
        return '%s before training started (or in a grid: see each run above)' % word
    done = getattr(e, 'epochs_logged', 0)
    rows = ('progress.txt holds epochs 1-%d' % done if done > 1 else
            'progress.txt holds epoch 1' if done == 1 else
            'no epoch had finished, so there is no progress row yet')
    return ('%s: %s; the model and a checkpoint were saved: continue with '
            'python run.py resume %s' % (word, rows, folder))


def _raise_terminated(signum, frame):
    raise Terminated()


def _dispatch(argv):
    usage = USAGE.format(algos=', '.join(ALGOS))
    if not argv or argv[0] in ('-h', '--help', 'help'):
        print(usage)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == 'plot':
        from spinup_tf.tools.plot import main as plot_main
        return plot_main(rest)
    if cmd == 'test_policy':
        from spinup_tf.tools.test_policy import main as test_policy_main
        return test_policy_main(rest)
    if cmd == 'tune':
        from spinup_tf.tools.tune import main as tune_main
        return tune_main(rest)
    if cmd == 'resume':
        if rest and rest[0] in ('-h', '--help'):
            print(RESUME_HELP)
            return 0
        if len(rest) != 1 or rest[0].startswith('-'):
            raise UserInputError('usage: python run.py resume RUN_DIR')
        from spinup_tf.tools.resume import resume_kwargs
        signal.signal(signal.SIGTERM, _raise_terminated)  # checks only so far: stop at once
        fn, kwargs = resume_kwargs(rest[0])
        install_stop_handlers()  # training from here: stop between two env steps, saved
        fn(**kwargs)
        return 0
    if cmd not in ALGOS:
        raise UserInputError('unknown algorithm %r; valid commands: %s'
                             % (cmd, ', '.join(list(ALGOS) + list(SUBCOMMANDS))))
    if '--help' in rest or '-h' in rest:
        print(algo_help(cmd))
        return 0
    plan = build_runs(cmd, rest)
    if plan.workers == 1 and plan.backend == 'local':
        install_stop_handlers()  # training runs here: stop between two env steps
    else:
        signal.signal(signal.SIGTERM, _raise_terminated)  # the grid stops its workers
    if len(plan.experiments) == 1 and plan.workers == 1 and plan.backend == 'local':
        fn, kwargs = plan.experiments[0]
        fn(**kwargs)  # one run, here: its errors go to main() as they are
        return 0
    if len(plan.experiments) > 1:
        plan.grid.print()
    announce(plan.experiments)
    try:
        results = run_experiments(plan.experiments, workers=plan.workers,
                                  backend=plan.backend, address=plan.address)
    except RayStartError as e:
        raise UserInputError(str(e)) from None
    return 0 if all(r.ok for r in results) else 1


def algo_help(name):
    """Usage line, flags with defaults, and the algorithm's docstring (read from the source:
    TensorFlow is not imported)."""
    lines = ['usage: python run.py %s --env ENV_ID [--flag VALUE ...]' % name, '',
             'flags (defaults):']
    comments = option_help(name)
    for key, param in parameters(name).items():
        if key in NOT_FLAGS:
            continue
        line = '  --%-22s %-8r' % (key, param.default)
        lines.append(line + ('  ' + comments[key] if key in comments else ''))
    lines += ['', "a source document's quirks (off: this project's defaults, Spinning Up's but "
              "for three that restore Spinning Up's own code: spinning_up_start_steps, "
              "spinning_up_cg, adv_epsilon; the presets set them):"]
    from spinup_tf.reproductions.hooks import quirk_flags
    for key, flag in quirk_flags(LOOPS[name]).items():
        lines.append('  --%-22s %-8r  %s' % (key, flag.default, flag.help))
    lines += ['', 'run options:']
    lines += ['  --%-22s %s' % ('env', 'gymnasium id (required)'),
              '  --%-22s %s' % ('hid', 'hidden sizes, e.g. "[256,256]" (ac_kwargs)'),
              '  --%-22s %s' % ('act', 'activation: ' + ', '.join(ACTIVATIONS)),
              '  --%-22s %s' % ('env_kwargs', 'keyword arguments of gym.make, e.g. '
                                              '"{\'continuous\': True}"'),
              '  --%-22s %s' % ('exp_name', 'experiment name (default ALGO_ENV)'),
              '  --%-22s %s' % ('data_dir', 'where run folders go (default ./data)'),
              '  --%-22s %s' % ('datestamp', 'prefix folders with date and time'),
              '  --%-22s %s' % ('overwrite', 'replace an earlier run '
                                             '(moved aside to FOLDER.trash-TIME)'),
              '  --%-22s %s' % ('workers', "variants run at once, each in its own process "
                                           "(default 1; 'auto': the cores other processes "
                                           "leave idle)"),
              '  --%-22s %s' % ('backend', 'local (default) or ray'),
              '  --%-22s %s' % ('address', 'Ray cluster address (default: start a local one)'),
              '  --%-22s %s' % ('preset', "a seed's configuration (below); later flags "
                                          'override it'),
              '', 'Several values after a flag run a grid: --seed 0 10 20', ''] + \
        _describe_presets(name) + [''] + describe_env_defaults(name) + ['',
              algo_docstring(name)]
    return '\n'.join(lines)


