"""The tests' ``python run.py ARGS``, without paying for the imports each time.

Importing TensorFlow, gymnasium and the package costs about 5 s here, more than most CLI calls
of the tests spend running. This process imports them once, then forks one child per request
(``conftest.run_cli``); the child is what ``python run.py ARGS`` is after its imports: its own
working directory, environment, ``sys.argv``, stdin from ``/dev/null``, stdout and stderr to
files, and the exit status a fresh interpreter would give (``SystemExit``'s code, 1 and a
traceback for an uncaught exception, minus the signal number when killed). The product does the
same for its grid workers (``spinup_tf.tools.launch``'s fork server preloads these modules).

Protocol, one JSON object per line: request ``{"args", "cwd", "env", "stdout", "stderr"}``, and
optionally ``"script"`` (run instead of ``run.py``, e.g. ``tests/sentinel_run.py``) and
``"stdin"`` (a path, such as a FIFO; ``/dev/null`` otherwise), on stdin; replies
``{"pid": N}`` at the fork and ``{"returncode": N}`` when the child has gone. The child leads
its own process group, so a timeout can kill it with its grid workers. Tests of the start-up
itself (its output, its imports) start a fresh interpreter instead.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_PY = os.path.join(ROOT, 'run.py')
PRELOAD = ('numpy', 'gymnasium', 'spinup_tf.utils.tf1', 'spinup_tf.tools.cli')


def serve():
    """Answer requests until stdin closes. Returns the request in a forked child, else None."""
    control_in, control_out = sys.stdin, sys.stdout
    for line in control_in:
        request = json.loads(line)
        control_out.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            return request
        control_out.write(json.dumps({'pid': pid}) + '\n')
        control_out.flush()
        _, status = os.waitpid(pid, 0)
        control_out.write(json.dumps({'returncode': os.waitstatus_to_exitcode(status)}) + '\n')
        control_out.flush()
    return None


def become_run_py(request):
    """Turn this (forked) process into ``python run.py ARGS``; never returns normally."""
    import runpy
    os.setpgid(0, 0)
    os.chdir(request['cwd'])
    os.environ.clear()
    os.environ.update(request['env'])
    script = request.get('script', RUN_PY)
    for fd, path, flags in ((0, request.get('stdin', os.devnull), os.O_RDONLY),
                            (1, request['stdout'], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, request['stderr'], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        opened = os.open(path, flags, 0o644)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(0, closefd=False)
    sys.argv = [script] + list(request['args'])
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as for `python SCRIPT`
    runpy.run_path(script, run_name='__main__')
    sys.exit(0)  # a script that returns exits 0; SystemExit and errors propagate as usual


if __name__ == '__main__':
    sys.path.insert(0, ROOT)
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
    import importlib
    for name in PRELOAD:
        importlib.import_module(name)
    child_request = serve()
    if child_request is not None:
        become_run_py(child_request)
