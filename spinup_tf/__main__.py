"""``python -m spinup_tf ...`` and the ``spinup-tf`` console script: what ``python run.py ...``
does (``spinup_tf.tools.cli``).

A folder from elsewhere (a download, a colleague's disk) is data, and so is the working
directory a command runs in. ``python -m spinup_tf`` puts the working directory first on
``sys.path``: started inside such a folder, it would import a ``spinup_tf/`` package planted
there instead of this one, and no code of this package can prevent that (it is not the code
that runs). So for folders from elsewhere use the ``spinup-tf`` console script (its
``sys.path`` starts with its own ``bin/`` folder) or ``python -P -m spinup_tf`` (``-P``:
Python 3.11's "safe path", no working directory on the path), or ``python /path/to/run.py``
(its own folder first). When this package is the one that runs, :func:`main` first takes the
working directory off ``sys.path`` (unless this package lives there), so that a planted
``numpy.py`` or ``gymnasium/`` in it is never imported either.
"""
import os
import sys


def _drop_working_directory():
    """Remove the entries of ``sys.path`` that stand for the working directory (``''`` or its
    absolute path), unless this package was imported from there (a checkout's root, where
    ``python -m spinup_tf`` is how one runs it)."""
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:
        cwd = None
    home = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if cwd is None or cwd == home:
        return
    sys.path[:] = [p for p in sys.path
                   if p not in ('', '.') and os.path.realpath(p or '.') != cwd]


def main(argv=None):
    """Entry point; returns the exit code (the console script exits with it)."""
    _drop_working_directory()
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')  # before anything imports TensorFlow
    from spinup_tf.tools.cli import main as cli_main
    return cli_main(argv)


if __name__ == '__main__':
    sys.exit(main())
