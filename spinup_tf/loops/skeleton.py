"""The epoch skeleton both loops share: start or resume, collect, update, test, log,
checkpoint, and stop cleanly on Ctrl-C.

A loop subclasses :class:`EpochLoop` and writes only what its family of algorithms does
differently: :meth:`EpochLoop.collect` (the steps of the whole run, calling
:meth:`EpochLoop.end_epoch` where an epoch ends), the columns only it logs
(:meth:`EpochLoop.log_columns`), and what a checkpoint holds besides the counters
(:meth:`EpochLoop.resumable_state`). Everything else, in Spinning Up's order, is here::

    end of an epoch:  check the diagnostics are finite -> save the model (every save_freq
                      epochs, and the last) -> test episodes -> keep the best model ->
                      the progress row -> the checkpoint

The test episodes (the second half of this module): off-policy algorithms test their
deterministic policy every epoch (``num_test_episodes``, 10 by default); on-policy ones do when
their ``num_test_episodes`` option is above 0 (0 by default, as Spinning Up), with the mean
action of a Gaussian policy and the argmax of a categorical one. After them, the model of the
best epoch so far is kept in ``tf1_save_best/`` (``spinup_tf.utils.best_model``).
"""
import time

from spinup_tf.utils.checkpoint import Checkpointer
from spinup_tf.utils.envs import seed_env
from spinup_tf.utils.signals import check_stop, undone_on_interrupt
from spinup_tf.utils.errors import check_finite
from spinup_tf.utils.episode_replay import EpisodeRecorder
from spinup_tf.utils.run_setup import run_loop
from spinup_tf.utils.best_model import save_best, keep_best


class EpochLoop:
    """Spinning Up's epochs, for one run.

    Args:
        run: the loop's ``Run``: ``p`` (the loop's parameters: ``seed``, ``epochs``,
            ``steps_per_epoch``, ``max_ep_len``, ``save_freq``, ``num_test_episodes``...),
            ``logger``, ``hooks``, ``env`` and ``test_env`` (None: no test episodes).
        agent: what acts and learns: ``act(o)`` (the deterministic test action),
            ``log_diagnostics(logger)`` (the algorithm's columns), ``finite_keys`` (stored
            diagnostics that must stay finite) and, optionally, ``closers`` (closed when the
            loop ends, e.g. the session).
        store: the experience store the checkpoint keeps (replay or GAE buffer).
    """

    def __init__(self, run, agent, store):
        self.p, self.logger, self.hooks = run.p, run.logger, run.hooks
        self.env, self.test_env, self.agent = run.env, run.test_env, agent
        self.envs = [e for e in (self.env, self.test_env) if e is not None]
        self.checkpointer = Checkpointer(self.logger, self.envs, store)
        self.state = dict(t=0, epoch=0, elapsed=0.0, hooks=self.hooks.state)
        self.episode = EpisodeRecorder(self.env)  # how to rebuild the open episode on resume
        self.finished = False  # the last epoch's row is written
        self.save_best = save_best(self.logger)  # the best test return's model: tf1_save_best/
        self.start_time = None

    # ---- the whole run ----------------------------------------------------------------
    def run(self):
        run_loop(self._loop, self.logger, self.checkpointer, self.state, self.save,
                 self.envs + list(getattr(self.agent, 'closers', ())),
                 on_interrupt=self.interrupted_state)

    def _loop(self):
        self.start_time = time.time()
        if self.logger.resume:
            self.state.update(self.checkpointer.restore())
            self.hooks.state = self.state.setdefault('hooks', {})
        self.collect()

    def collect(self):
        """Run the steps of the whole run (from ``state`` when resumed), calling
        :meth:`end_epoch` where each epoch ends."""
        raise NotImplementedError

    def resumable_state(self):
        """What a checkpoint holds besides ``state``."""
        return {}

    def interrupted_state(self):
        """What a checkpoint written on Ctrl-C holds besides ``state``."""
        return self.resumable_state()

    def save(self, epoch):
        """The model, to ``tf1_save/`` (``epoch`` None on Ctrl-C)."""
        self.logger.save_state({'epoch': epoch})

    def elapsed(self):
        return self.state['elapsed'] + time.time() - self.start_time

    # ---- the end of an epoch ---------------------------------------------------------
    def end_epoch(self, epoch, total_steps, last):
        """Check, save, test, log and checkpoint epoch ``epoch`` (``total_steps`` env steps
        so far; ``last``: the run's last epoch)."""
        p, logger, state = self.p, self.logger, self.state
        state['row_owed'] = epoch  # a resumed run finishes this epoch before going on
        check_finite(logger, self.agent.finite_keys, epoch)
        saving = (p.save_freq and epoch % p.save_freq == 0) or last
        if saving:
            self.save(epoch)
        self.test(epoch, last)
        self.hooks.after_tests(self, epoch)
        self.hooks.write_row(self, epoch, total_steps)
        logger.epoch_dict.clear()  # values stored but not logged (e.g. DDPG's Backup)
        state.update(epoch=epoch, row_owed=None)
        self.finished = last
        if saving:
            self.checkpointer.save(dict(state, elapsed=self.elapsed(), **self.resumable_state()))

    def end_without_row(self):
        """The run's last steps ended no epoch (a seed whose epochs end one step late): save
        the model and a checkpoint of the finished run (all its steps taken), with no row,
        so a resume has nothing left to run."""
        self.save(self.state['epoch'])
        self.finished = True
        self.checkpointer.save(dict(self.state, elapsed=self.elapsed(), **self.resumable_state()))

    def test(self, epoch, last):
        """The epoch's deterministic test episodes, and the best model they choose."""
        if self.test_env is None:
            return
        n = self.hooks.test_episodes(epoch, last, self.p.num_test_episodes)
        if n:
            env, seed = self.hooks.test_on(self)
            run_test_episodes(env, self.agent.act, n, self.p.max_ep_len, seed, self.state,
                              self.logger)
        keep_best(self.logger, self.state, epoch, self.save_best)

    def log_row(self, epoch, total_steps):
        """The epoch's progress row: Spinning Up's columns, the loop's, the algorithm's."""
        logger, testing = self.logger, self.test_env is not None
        logger.log_tabular('Epoch', epoch)
        logger.log_tabular('EpRet', with_min_and_max=True)
        if testing:
            logger.log_tabular('TestEpRet', with_min_and_max=True)
        logger.log_tabular('EpLen', average_only=True)
        if testing:
            logger.log_tabular('TestEpLen', average_only=True)
        self.log_columns()
        logger.log_tabular('TotalEnvInteracts', total_steps)
        self.agent.log_diagnostics(logger)
        self.hooks.log_extra(logger, self)
        logger.log_tabular('Time', self.elapsed())
        logger.dump_tabular()

    def log_columns(self):
        """Columns of this loop's own, before ``TotalEnvInteracts``."""


# --------------------------------------------------------------------------------------------
# Test episodes
# --------------------------------------------------------------------------------------------
TEST_SEED_OFFSET = 10000


def run_test_episodes(test_env, act, n, max_ep_len, seed, state, logger):
    """``n`` episodes of ``act(o)`` on ``test_env``; each is stored as ``TestEpRet``
    and ``TestEpLen``. The first reset of the run (``state['test_seeded']`` False) seeds the
    env with ``seed + 10000``; later ones continue its RNG (all of them with ``seed`` None).

    Ctrl-C / SIGTERM stop it at the next env step (``check_stop``). The phase is then undone
    before the interrupt goes on: what it stored in the logger is dropped and the test env's
    RNG put back, so the checkpoint written next holds no partial test statistics and a
    resumed run tests that epoch again from the same start."""
    seeded = state.get('test_seeded')
    with undone_on_interrupt(logger, state, 'test_seeded',
                             test_env if seeded or seed is None else None):
        for _ in range(n):
            if seed is not None and not state.get('test_seeded'):
                o = seed_env(test_env, seed + TEST_SEED_OFFSET)
                state['test_seeded'] = True
            else:
                o, _ = test_env.reset()
            ep_ret, ep_len, done = 0.0, 0, False
            while not done:
                check_stop()  # Ctrl-C / SIGTERM: at the next step, also in a long test phase
                # Take deterministic actions at test time (no noise).
                o, r, terminated, truncated, _ = test_env.step(act(o))
                ep_ret += r
                ep_len += 1
                done = terminated or truncated or ep_len == max_ep_len
            logger.store(TestEpRet=ep_ret, TestEpLen=ep_len)
