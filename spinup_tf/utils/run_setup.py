"""Spinning Up's preamble, written once for every algorithm: the envs, the checks that must
pass before anything is written, the logger and ``config.json``, a seeded graph, and the
session.

Every algorithm starts with ``setup = Setup(...)`` (through its loop's ``Run``), builds its
graph in ``setup.graph``, and ends with ``setup.start_session(...)`` inside its loop.
"""
import time
from types import SimpleNamespace

import numpy as np

from spinup_tf.utils.tf1 import tf, make_session
from spinup_tf.utils.envs import env_id_of
from spinup_tf.utils.ranges import check_ranges, check_ac_kwargs
from spinup_tf.utils.logx import EpochLogger
from spinup_tf.utils.run_folder import lock_run_folder, release_run_folder
from spinup_tf.utils.normalize import normalize_envs
from spinup_tf.utils.atari import is_atari_env, training_wrappers
from spinup_tf.utils.errors import DiskFullError, disk_full_path


def _disk_full_message(output_dir, path, state):
    """Stop on a full disk like on Ctrl-C, but write nothing more: drop the half-written
    copies (a save writes ``*.tmp`` first; the complete ones stay) and say what is kept."""
    import os
    import os.path as osp
    from spinup_tf.utils.safe_files import read_json, remove_any
    from spinup_tf.utils.errors import UserInputError
    for name in os.listdir(output_dir):
        if name.endswith('.tmp'):
            remove_any(osp.join(output_dir, name))  # never opened: a FIFO cannot hang it
    try:
        state_json = read_json(osp.join(output_dir, 'checkpoint', 'state.json'))
        kept = 'the checkpoint of epoch %d' % state_json['counters']['epoch']
    except (OSError, ValueError, KeyError, TypeError, UserInputError):
        kept = 'no checkpoint yet'
    return ('the disk is full: no space left on device while writing %s (in epoch %d); the '
            'run stopped, keeping %s and the last saved model; free some space, then: '
            'python run.py resume %s' % (path or 'into ' + output_dir,
                                          state.get('epoch', 0) + 1, kept, output_dir))


def split_config(algo, config, options, loop_parameters, hooks_class):
    """An algorithm's ``locals()`` as a loop reads them.

    Returns:
        ``(options, p, hooks, config)``: the loop's options (``options`` overridden by the
        algorithm's ``**options``, as attributes; an unknown one is a ``TypeError``, as for
        any function), the loop's parameters (``loop_parameters``, as attributes), the
        run's hooks (``options['hooks']``, a ``hooks_class``; ``hooks_class()`` when not
        given), and the config to record: the hyperparameters with every option
        and the hooks' flags flattened in.
    """
    given = dict(config.get('options') or {})
    hooks = given.pop('hooks', None)
    if hooks is None:
        hooks = hooks_class()
    elif not isinstance(hooks, hooks_class):
        raise TypeError('%s(): hooks must be a %s.%s, got %r'
                        % (algo, hooks_class.__module__, hooks_class.__name__, hooks))
    unknown = sorted(set(given) - set(options))
    if unknown:
        raise TypeError('%s() got unexpected keyword arguments %s' % (algo, unknown))
    opts = SimpleNamespace(**dict(options, **given))
    config = dict({k: v for k, v in config.items() if k != 'options'}, **vars(opts))
    config.update(hooks.flags)
    return opts, SimpleNamespace(**{k: config[k] for k in loop_parameters}), hooks, config


class Setup:
    """Envs, checks, logger, config and a seeded graph.

    Args:
        algo (str): the algorithm's name (recorded in ``config.json``).
        env_fn: makes one env; ``n_envs`` are made (training, and test for off-policy).
        config (dict): every hyperparameter (the algorithm's ``locals()``), written to
            ``config.json`` unless the run resumes.
        check (callable): ``check(env)`` raises ``UserInputError`` for spaces or settings
            the algorithm cannot handle (budgets among them); run before the run folder is
            touched.
        tensorboard (bool): mirror every progress column to TensorBoard
            (``EpochLogger.enable_tensorboard``).

    Attributes: ``envs`` (list), ``logger`` (``EpochLogger``), ``graph`` (with
    ``tf.set_random_seed(seed)`` applied; numpy's global RNG is seeded too), ``seed``,
    ``env_kwargs`` (``env_fn.kwargs``, ``{}`` without: what a fresh env for videos needs).
    """

    def __init__(self, algo, env_fn, config, check, n_envs=1, tensorboard=False):
        check_ranges(config)  # every hyperparameter in its declared range, before anything
        if config.get('actor_critic') is not None:
            check_ac_kwargs(config['actor_critic'], config.get('ac_kwargs'))
        self.envs = [env_fn() for _ in range(n_envs)]
        self.env_kwargs = dict(getattr(env_fn, 'kwargs', {}) or {})  # the videos' fresh envs
        try:
            check(self.envs[0])
        except Exception:
            self.close_envs()
            raise
        logger_kwargs = dict(config.get('logger_kwargs') or {})
        preset = logger_kwargs.pop('preset', None)  # the CLI's --preset NAME, for config.json
        if logger_kwargs.get('output_dir'):  # one process per run folder, before any write
            try:
                lock_run_folder(logger_kwargs['output_dir'])
            except Exception:
                self.close_envs()
                raise
        self.logger = EpochLogger(**logger_kwargs)
        if is_atari_env(self.envs[0]):  # the learner's game: lives, FIRE, clipped rewards
            self.envs[0] = training_wrappers(self.envs[0])
        self.envs = normalize_envs(self.envs, config, self.logger)  # --normalize_obs/_rew
        # config.json is written once the graph is built (start_session): a run that fails
        # before that (a broken actor_critic, say) leaves no sign of a run in its folder, so
        # running the corrected command again is not refused. A resumed run keeps its own.
        self._config = None if self.logger.resume else dict(
            config, algo=algo, env_id=env_id_of(self.envs[0]), preset=preset,
            logger_kwargs=logger_kwargs)
        self.seed = config.get('seed', 0)
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.set_random_seed(self.seed)
        np.random.seed(self.seed)
        if tensorboard:
            self.logger.enable_tensorboard(self.graph)

    def count_vars(self, scopes, names):
        """Log ``Number of parameters: name: count ...`` for the trainable variables of each
        scope (exact prefix), as Spinning Up does. A scope with no variables is looked for
        one level deeper (``main/q1`` as ``main/*/q1``: a critic that keeps both Q networks
        in one scope, ``main/critic/q1``)."""
        from spinup_tf.utils.tf1 import count_vars, get_trainable_vars
        import numpy as np

        def count(scope):
            n = count_vars(scope)
            if n or '/' not in scope:
                return n
            head, leaf = scope.rsplit('/', 1)
            return int(sum(np.prod(v.shape.as_list()) for v in get_trainable_vars(head + '/')
                           if v.name[len(head) + 1:].split('/')[1:2] == [leaf]))

        with self.graph.as_default():
            counts = [count(scope) for scope in scopes]
        self.logger.log('\nNumber of parameters: \t' + ', \t'.join(
            '%s: %d' % (name, n) for name, n in zip(names, counts)) + '\n')

    def start_session(self, inputs, outputs, init_ops=()):
        """A session on the graph with variables initialised, then ``init_ops`` run (e.g.
        copying main into target).

        Registers ``inputs``/``outputs`` for the SavedModel, then finalizes the graph:
        nothing can add ops in the training loop (no silent graph growth).
        """
        with self.graph.as_default():
            sess = make_session(self.graph)
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            for op in init_ops:
                sess.run(op)
            if self._config is not None:  # the graph is built and runs: now it is a run
                self.logger.save_config(self._config)
            self.logger.setup_tf_saver(sess, inputs=inputs, outputs=outputs)
        self.graph.finalize()
        self.session = sess
        return sess

    def close_envs(self):
        for env in self.envs:
            env.close()


def run_loop(loop, logger, checkpointer, state, save, closers, on_interrupt=None):
    """Run ``loop()``, the body of an interaction loop, to its end.

    On Ctrl-C or SIGTERM (``KeyboardInterrupt``) it saves the model (``save(None)``) and a
    checkpoint of ``state`` (with the seconds run so far added to ``state['elapsed']``, and
    the entries ``on_interrupt()`` returns) before the interrupt goes on. The logger and
    every object of ``closers`` are closed whatever happens.
    """
    started = time.time()
    try:
        loop()
    except KeyboardInterrupt as e:
        logger.log('Interrupted: saving the model and a checkpoint before exiting.', 'yellow')
        save(None)
        extra = on_interrupt() if on_interrupt is not None else {}
        checkpointer.save(dict(state, elapsed=state['elapsed'] + time.time() - started,
                               **extra))
        e.run_folder, e.epochs_logged = logger.output_dir, state.get('epoch', 0)  # for the CLI
        raise
    except Exception as e:
        path = disk_full_path(e)
        if path is None:
            raise
        raise DiskFullError(_disk_full_message(logger.output_dir, path, state)) from None
    finally:
        logger.close()
        for closer in closers:
            closer.close()
        release_run_folder(logger.output_dir)
