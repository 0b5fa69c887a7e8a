"""The fused update window of the off-policy algorithms: a whole window of gradient steps in
one ``sess.run``.

Spinning Up runs every update as its own ``sess.run`` calls, fed with a numpy batch. Each
call costs far more in TF's per-call overhead than the small networks' arithmetic, so the
updates dominate the wall time. Here one ``sess.run`` per window

1. writes the transitions staged since the last window into the graph's replay buffer
   (``GraphReplayBuffer.write_op``),
2. runs ``n`` updates in a ``tf.while_loop``: each draws its batch in-graph (uniform with
   replacement over the held transitions, like the numpy sampler) and applies the
   algorithm's own update step, built with the same optimizer objects as the plain train ops,
3. returns every update's diagnostics stacked ``(n, ...)`` and the policy's weights after the
   last update (for the numpy actor).

The step function decides the order of its train ops with control dependencies; the loop
makes each iteration wait for the previous one's ops. :func:`actor_critic_updates` builds
DDPG's and TD3's updates so that their parts that touch different variables overlap on the
two cores (the policy's forward pass beside the Q step; with two updates per iteration,
``chunk=2`` as TD3 uses, the next Q step's forward pass beside the policy step), with every
variable's reads and writes in the sequential loop's order, hence the same results.
"""
from types import SimpleNamespace

from spinup_tf.utils.tf1 import tf, paired_vars, polyak_update_op
from spinup_tf.fast.graph_replay_buffer import sample_indices, gather_batch


def build_update_window(buffer, batch_size, update_steps, diagnostics, weights=(), sampler=None,
                        chunk=1):
    """Build the fused window in the default graph.

    Args:
        buffer: the ``GraphReplayBuffer``.
        batch_size (int): transitions per update.
        update_steps: ``update_steps(batches, j) -> (train_op, outputs)`` builds
            ``len(batches)`` consecutive updates, the first being update ``j`` of the window
            (an int32 scalar tensor, a multiple of ``len(batches)``), each on its ``batch =
            (obs1, obs2, acts, rews, done)`` tensors (``(batch, obs_dim)``, ``(batch,
            obs_dim)``, ``(batch, act_dim)``, ``(batch,)``, ``(batch,)``). ``train_op`` runs
            all their train ops; ``outputs`` is a list with one dict per update, mapping the
            names in ``diagnostics`` to float32 tensors (their values once ``train_op`` ran).
        diagnostics: names of the per-update outputs to return.
        weights: variables whose values (after the window) are returned too.
        sampler: ``sampler(j) -> (batch,)`` int32 slots of update ``j``; default
            :func:`sample_indices` (tests pass fixed indices to compare with the plain path).
        chunk (int): updates per loop iteration. With more than one, the updates of an
            iteration are built together, so that the algorithm can order them only where
            they share variables and let independent parts of consecutive updates overlap
            (e.g. the next Q step's forward pass with the policy step). A window of ``n``
            updates runs ``n // chunk`` such iterations, then the rest one at a time.

    Returns:
        A namespace with ``n_updates_ph`` (scalar int32 placeholder), ``feed_list`` (the
        staging placeholders, ``filled_ph`` and ``n_updates_ph``, in the order
        ``FusedUpdater`` feeds them), ``outputs`` (name -> ``(n, ...)`` stacked tensor) and
        ``weights`` (tensors of ``weights`` read after the loop).
    """
    n_updates_ph = tf.placeholder(tf.int32, (), name='n_updates')
    if sampler is None:
        def sampler(j):
            return sample_indices(buffer.valid_var, buffer.filled_ph, batch_size)

    def body_of(size):
        def body(j, *arrays):
            batches = [gather_batch(buffer, sampler(j + i), batch_size) for i in range(size)]
            train_op, outputs = update_steps(batches, j)
            with tf.control_dependencies([train_op]):
                for i, out in enumerate(outputs):
                    arrays = [ta.write(j + i, tf.identity(out[name]))
                              for ta, name in zip(arrays, diagnostics)]
                return [j + size] + list(arrays)
        return body

    def loop(size, start, arrays, name):
        final = tf.while_loop(lambda j, *_: j + size <= n_updates_ph, body_of(size),
                              [start] + arrays, parallel_iterations=1, name=name)
        return (final, []) if not arrays else (final[0], list(final[1:]))  # one var comes bare

    with tf.name_scope('fused_window'):
        with tf.control_dependencies([buffer.write_op]):
            j = tf.identity(tf.constant(0, tf.int32))
        arrays = [tf.TensorArray(tf.float32, size=n_updates_ph, name=name)
                  for name in diagnostics]
        if chunk > 1:
            j, arrays = loop(chunk, j, arrays, 'chunks')
        j, arrays = loop(1, j, arrays, 'updates')
        outputs = {name: ta.stack() for name, ta in zip(diagnostics, arrays)}
        with tf.control_dependencies([j] + list(outputs.values())):
            weight_values = [v.read_value() for v in weights]
    return SimpleNamespace(n_updates_ph=n_updates_ph,
                           feed_list=list(buffer.stage_phs) + [buffer.filled_ph, n_updates_ph],
                           outputs=outputs, weights=weight_values)


class FusedUpdater:
    """Python side of the fused window: ``updater(n)`` runs ``n`` updates in one call.

    Args:
        sess: the session.
        buffer: the ``GraphReplayBuffer`` (attached to ``sess`` here).
        window: what :func:`build_update_window` returned.
        on_outputs: ``on_outputs(outputs)`` gets the dict of stacked diagnostics, e.g. to
            store them in the logger.
        on_weights: ``on_weights(values)`` gets the weights after the window (e.g. the numpy
            actor's ``set_weights``).
    """

    def __init__(self, sess, buffer, window, on_outputs, on_weights=None):
        self.buffer = buffer
        buffer.attach(sess)
        self.names = list(window.outputs)
        self.n_weights = len(window.weights)
        fetches = [window.outputs[k] for k in self.names] + list(window.weights)
        self._run = sess.make_callable(fetches, feed_list=window.feed_list)
        self.on_outputs, self.on_weights = on_outputs, on_weights

    def __call__(self, n_updates):
        buf = self.buffer
        values = self._run(*buf.staged_feeds(), buf.filled, n_updates)
        k = len(self.names)
        self.on_outputs(dict(zip(self.names, values[:k])))
        if self.on_weights is not None and self.n_weights:
            self.on_weights(values[k:])


def actor_critic_updates(batches, j, q_step, policy_step, polyak, critic_scopes,
                         policy_every=1):
    """Consecutive actor-critic updates for :func:`build_update_window`'s ``update_steps``,
    ordered only where they share variables.

    Update ``j + i`` (on ``batches[i]``) is a Q step, then, when ``(j + i) % policy_every
    == 0``, a policy step and the polyak update of all target networks, as in Spinning Up's
    loop. Every read or write of a variable keeps its place in that order, so the results
    are those of the sequential loop; parts that touch different variables may overlap:

    * the target critics follow the main ones as soon as the Q step is done (the policy
      step neither reads nor writes them), the target policy after the policy step;
    * the policy step's forward pass through the actor only waits for the previous policy
      step, so it runs beside the Q step; the critic's part waits for the Q step;
    * the next Q step's forward pass on the main networks only waits for the previous Q
      step, so it runs while the policy step is still being computed; its target networks
      wait for the targets, and its optimizer writes wait until the policy step and the
      targets have read the Q weights.

    Args:
        batches: the updates' batch tensors (see ``build_update_window``).
        j: int32 scalar tensor, the window index of the first update; a multiple of
            ``len(batches)``, so that the policy steps fall on fixed positions when
            ``len(batches)`` is a multiple of ``policy_every`` (else each is a ``tf.cond``).
        q_step: ``q_step(batch, main_after, target_after, apply_after) -> (outputs,
            train_q)``: the Q step, its main networks' reads after the ops ``main_after``,
            its target networks' reads after ``target_after``, its optimizer's writes after
            ``apply_after``; ``outputs`` is a dict of diagnostics.
        policy_step: ``policy_step(batch, custom_getter) -> (loss_pi, train_pi)``, its main
            networks built under ``tf.variable_scope('main', reuse=True,
            custom_getter=custom_getter)`` (which orders their reads, see
            :func:`reads_after`); DDPG's and TD3's is :func:`deterministic_policy_step`.
        polyak (float): the targets' interpolation factor (``tf1.polyak_update_op``).
        critic_scopes: the critics' scopes under ``main``/``target`` (``('q1', 'q2')``); the
            policy's is ``pi``.
        policy_every (int): the policy step's delay (TD3's ``policy_delay``; 1 for DDPG).

    Returns:
        ``(train_op, outputs)``: ``outputs[i]`` is update ``i``'s dict with ``LossPi``
        (0 where no policy step ran).
    """
    def policy_and_targets(batch, train_q, policy_after):
        # The target critics read the new Q weights. The policy step runs after
        # ``policy_after`` (the previous policy step's writes, including its optimizer's
        # beta powers, which its own Adam ops read); of its reads, those of the critics'
        # weights also wait for the Q step.
        with tf.control_dependencies([train_q]):
            critic_targets = [polyak_update_op(polyak, 'main/' + scope, 'target/' + scope)
                              for scope in critic_scopes]
        with tf.control_dependencies(policy_after):
            loss_pi, train_pi = policy_step(batch, reads_after(
                [('main/pi', []), ('main', [train_q])]))
        with tf.control_dependencies([train_pi]):
            policy_target = polyak_update_op(polyak, 'main/pi', 'target/pi')
        with tf.control_dependencies(critic_targets + [policy_target]):
            return tf.identity(loss_pi)

    covered = sum((paired_vars('main/' + scope, 'target/' + scope)
                   for scope in ('pi',) + tuple(critic_scopes)), [])
    if set(covered) != set(paired_vars('main', 'target')):
        raise ValueError('the target update by parts (pi, %s) misses some of the target '
                         'networks\' variables' % ', '.join(critic_scopes))

    static = len(batches) % policy_every == 0
    last_q, last_targets, outputs = None, None, []
    for i, batch in enumerate(batches):
        after_q = [last_q] if last_q is not None else []
        after_targets = [last_targets] if last_targets is not None else []
        out, train_q = q_step(batch, after_q, after_targets, after_targets)
        if static and i % policy_every:  # no policy step in this update
            loss_pi = tf.constant(0.0)
        else:
            if static:
                # The policy's forward pass only needs the last policy step: it overlaps the
                # Q step.
                loss_pi = policy_and_targets(batch, train_q, after_targets)
            else:
                with tf.control_dependencies([train_q]):
                    due = tf.equal(tf.math.floormod(j + i, policy_every), 0)
                    loss_pi = tf.cond(due, lambda: policy_and_targets(batch, train_q, [train_q]),
                                      lambda: tf.constant(0.0))
            last_targets = loss_pi.op
        outputs.append(dict(out, LossPi=loss_pi))
        last_q = train_q
    return tf.group(*[op for op in (last_q, last_targets) if op is not None]), outputs



def deterministic_policy_step(q_of_policy, optimizer, pi_vars):
    """DDPG's and TD3's ``policy_step`` for :func:`actor_critic_updates`: one ``optimizer``
    step on ``pi_vars`` minimising ``-mean Q(x, pi(x))`` over the batch's observations.

    Args:
        q_of_policy: ``q_of_policy(x, a) -> (batch,)`` the critic on the policy's actions,
            built with the algorithm's actor-critic in the current (``main``) scope (``a`` is
            the batch's actions, which the actor-critic takes but this output ignores).
    """
    def policy_step(batch, custom_getter):
        x, a = batch[0], batch[2]
        with tf.variable_scope('main', reuse=True, custom_getter=custom_getter):
            q_pi = q_of_policy(x, a)
        loss_pi = -tf.reduce_mean(q_pi)
        return loss_pi, optimizer.minimize(loss_pi, var_list=pi_vars)
    return policy_step


def reads_after(rules):
    """A ``custom_getter`` for ``tf.variable_scope`` that orders variable reads by scope.

    Args:
        rules: ``[(scope, ops), ...]``; a variable under the first matching ``scope`` (full
            name, e.g. ``'main/pi'``) is read after ``ops``. A variable that no rule
            matches raises ``ValueError``: an unordered read could race with a write.

    The getter returns the variable's value read under ``tf.control_dependencies(ops)``;
    gradients still reach the variable through that read.
    """
    def ordered_getter(getter, name, *args, **kwargs):
        var = getter(name, *args, **kwargs)
        for scope, ops in rules:
            if name == scope or name.startswith(scope + '/'):
                with tf.control_dependencies(ops):
                    return tf.identity(var)
        raise ValueError('no read order for variable %s' % name)
    return ordered_getter


def minimize_after(optimizer, loss, var_list, after):
    """``optimizer.minimize(loss, var_list=var_list)`` whose writes (not its gradients) wait
    for the ops ``after``."""
    grads = optimizer.compute_gradients(loss, var_list=var_list)
    with tf.control_dependencies(after):
        return optimizer.apply_gradients(grads)
