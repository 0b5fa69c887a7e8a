"""The Ray backend: each variant is a Ray task with one CPU, in a fresh worker process.

Ray is optional (``pip install -r requirements-ray.txt``); this module imports it only when a
grid runs on it.
"""
import dataclasses
import os
import os.path as osp
import pickle
import sys
import time

from spinup_tf.tools.variant import call_variant, error_line, status_detail, variant_payload
from spinup_tf.tools.results import final_performance

RAY_MISSING = "backend 'ray' needs the optional 'ray' package: pip install -r requirements-ray.txt"
PACKAGE_PARENT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))


def check_ray():
    """Raise ``ImportError(RAY_MISSING)`` when ray cannot be imported."""
    # Ray folds "repeated" log lines of different workers together; our epoch tables
    # repeat on purpose.
    os.environ.setdefault('RAY_DEDUP_LOGS', '0')
    try:
        import ray  # noqa: F401
    except ImportError:
        raise ImportError(RAY_MISSING) from None


class RayStartError(RuntimeError):
    """``ray.init`` failed (no cluster at the address, ...); no variant has run."""


def _ray_task(payload, thread_env):
    """A variant inside a Ray worker; returns ``(status, error, seconds, performance, key)``."""
    os.environ.update(thread_env)
    t0 = time.time()
    thunk, kwargs = pickle.loads(payload)
    output_dir = kwargs.get('logger_kwargs', {}).get('output_dir', '')
    try:
        status, error = call_variant(thunk, kwargs, osp.basename(osp.normpath(output_dir)))
    except KeyboardInterrupt:
        status, error = 'interrupted', 'interrupted'
    sys.stdout.flush()
    sys.stderr.flush()
    return (status, error, time.time() - t0) + final_performance(output_dir)


def run_ray(experiments, results, address, threads, out):
    """Run ``experiments`` as Ray tasks (``threads``: each task's share, in its environment),
    filling ``results`` as they end. Raises ``RayStartError`` when Ray cannot start."""
    import ray
    payloads = []
    for e, r in zip(experiments, results):
        # Workers may run elsewhere, in another folder: absolute paths only.
        lk = dict(e.kwargs.get('logger_kwargs') or {})
        if lk.get('output_dir'):
            lk['output_dir'] = osp.abspath(lk['output_dir'])
            r.output_dir = lk['output_dir']
        payloads.append(variant_payload(
            dataclasses.replace(e, kwargs=dict(e.kwargs, logger_kwargs=lk))))
    started = False
    if not ray.is_initialized():
        init_kwargs = dict(address=address)
        if address is None and not os.environ.get('RAY_ADDRESS'):
            init_kwargs.update(include_dashboard=False)
        try:
            ray.init(**init_kwargs)
        except Exception as exc:
            raise RayStartError('could not %s: %s' % (
                'connect to the Ray cluster at %s' % address if address else
                'start a local Ray instance', error_line(exc))) from exc
        started = True
    try:
        pythonpath = os.pathsep.join(
            [PACKAGE_PARENT] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep)
                                if p])
        env_vars = dict(threads.env(), PYTHONPATH=pythonpath,
                        TF_CPP_MIN_LOG_LEVEL=os.environ.get('TF_CPP_MIN_LOG_LEVEL', '2'))
        if 'TF_ENABLE_ONEDNN_OPTS' in os.environ:  # the user's choice, if any, goes along
            env_vars['TF_ENABLE_ONEDNN_OPTS'] = os.environ['TF_ENABLE_ONEDNN_OPTS']
        # max_calls=1: a fresh worker process per variant, as with the local backend.
        task = ray.remote(num_cpus=1, max_calls=1)(_ray_task).options(
            runtime_env={'env_vars': env_vars})
        refs = {}
        for i, p in enumerate(payloads):
            refs[task.remote(p, threads.env())] = i
            print('[grid] submitted %s to Ray' % results[i].label, file=out, flush=True)
        try:
            while refs:
                done, _ = ray.wait(list(refs), num_returns=1)
                for ref in done:
                    i = refs.pop(ref)
                    r = results[i]
                    try:
                        status, error, seconds, perf, key = ray.get(ref)
                    except Exception as exc:  # the worker died, or the task could not start
                        status, error, seconds, perf, key = 'failed', error_line(exc), 0.0, \
                            None, None
                    r.status, r.error, r.seconds = status, error, seconds
                    r.performance, r.performance_key = perf, key
                    if perf is None:
                        r.performance, r.performance_key = final_performance(r.output_dir)
                    print('[grid] %s: %s%s (%.1f s)' % (r.label, status,
                                                        status_detail(status, error),
                                                        r.seconds), file=out, flush=True)
        except KeyboardInterrupt:
            for ref, i in refs.items():
                ray.cancel(ref)
                results[i].status = 'interrupted'
                results[i].error = 'cancelled'
            raise
    finally:
        if started:
            ray.shutdown()
