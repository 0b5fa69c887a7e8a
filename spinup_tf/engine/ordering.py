"""Program order for variables inside one ``sess.run``: the fast engine's read/write hazards.

Within one ``sess.run``, TensorFlow runs ops that have no dependency between them in any
order, on any thread. When a whole window of updates runs in one call, each variable must
still be read and written in the order of the sequential loop, or the results change (and
differ from run to run). :class:`ProgramOrder` gives that order by construction, for any
sequence of steps and any variable layout:

* a **read** of a variable waits for the last **write** to it (read after write);
* a **write** waits for the last write (write after write) and for every read since then
  (write after read), so no read sees a value from the future;
* an optimizer is one more "variable": its apply ops read and write its own slots and
  counters (Adam's beta powers), so two steps of one optimizer never overlap.

Nothing else is ordered: ops on disjoint variables overlap on the cores (the policy's forward
pass beside the Q step, the target critics' polyak update beside the policy step).

Reads are taken through a ``tf.variable_scope`` custom getter (:meth:`getter`), so an
algorithm's own loss functions build their networks unchanged; writes are the optimizer's
``apply_gradients`` (:meth:`minimize`) and the assigns of ``tf1.polyak_update_op``
(:meth:`polyak`), each wrapped in the control dependencies above.
"""
from spinup_tf.utils.tf1 import tf, polyak_update_op


def _key(var):
    """One key per variable (its handle op name) or optimizer (its id)."""
    return var.op.name if hasattr(var, 'op') else ('optimizer', id(var))


class ProgramOrder:
    """Read/write hazard bookkeeping for the ops of one unrolled sequence of steps.

    Args:
        start: ops every first read and write waits for (e.g. the loop counter of the
            iteration, which the previous iteration's last ops gate).
    """

    def __init__(self, start=()):
        self.start = list(start)
        self.last_write = {}
        self.reads = {}

    # ---- reads -----------------------------------------------------------------------------
    def _after_write(self, key):
        op = self.last_write.get(key)
        return [op] if op is not None else list(self.start)

    def read(self, var):
        """``var``'s value, read after its last write."""
        key = _key(var)
        with tf.control_dependencies(self._after_write(key)):
            if hasattr(var, 'handle'):  # a resource variable: one read op, its gradient the
                value = tf.raw_ops.ReadVariableOp(resource=var.handle,  # variable's
                                                  dtype=var.dtype.base_dtype)
            else:
                value = tf.identity(var)
        self.reads.setdefault(key, []).append(value.op)
        return value

    def getter(self, getter, name, *args, **kwargs):
        """A ``custom_getter`` for ``tf.variable_scope``: every variable the networks get is
        read through :meth:`read`. Gradients reach the variable through that read."""
        return self.read(getter(name, *args, **kwargs))

    def scope(self):
        """``tf.variable_scope`` of the root with :meth:`getter`: build a loss in it."""
        return tf.variable_scope(tf.get_variable_scope(), custom_getter=self.getter,
                                 auxiliary_name_scope=False)

    # ---- writes ----------------------------------------------------------------------------
    def write_deps(self, keys):
        deps = []
        for key in keys:
            deps += self._after_write(key) + self.reads.get(key, [])
        return _unique(deps)

    def wrote(self, keys, op):
        for key in keys:
            self.last_write[key] = op
            self.reads[key] = []

    def polyak(self, polyak, main_scope='main', target_scope='target'):
        """``tf1.polyak_update_op`` with each variable's assign ordered on its own: the
        target of a critic follows the critic's last write, not the policy's."""
        def before(v_main, v_targ):
            return (self._after_write(_key(v_main))
                    + self.write_deps([_key(v_targ)]))

        def after(v_main, v_targ, assign):
            self.reads.setdefault(_key(v_main), []).append(assign.op)
            self.wrote([_key(v_targ)], assign.op)

        return polyak_update_op(polyak, main_scope, target_scope, before=before, after=after)

    # ---- the end of a sequence ---------------------------------------------------------------
    def frontier(self):
        """Every op a later sequence must wait for: the last writes and the reads since."""
        ops = list(self.last_write.values())
        for reads in self.reads.values():
            ops += reads
        return _unique(ops) or list(self.start)


def _unique(ops):
    seen, out = set(), []
    for op in ops:
        if op is not None and op.name not in seen:
            seen.add(op.name)
            out.append(op)
    return out


def _clipped(grads_and_vars, max_norm):
    """``grads_and_vars`` rescaled to global norm ``max_norm`` when above it (None: as is)."""
    if max_norm is None:
        return grads_and_vars
    grads, variables = zip(*grads_and_vars)
    clipped, _ = tf.clip_by_global_norm(list(grads), max_norm)
    return list(zip(clipped, variables))


def build_call(order, call, batch, gradients=True):
    """Build one ``train(*steps)`` call (``spinup_tf.engine.steps``) on ``batch``, ordered by
    ``order``: first every loss of the call (from the parameters as they were before it),
    then the writes, in the order of ``call``.

    ``gradients=False`` builds the losses and the optimizers' variables (Adam's moments and
    beta powers) but no backward pass: each optimizer applies zero gradients. That call only
    tells the diagnostics and makes the variables (the fast engine's window, which updates
    through its own copy of the call, needs no more); it must not run.

    Returns:
        ``(diagnostics, ops)``: ``[(loss_fn, its diagnostics dict)]`` for the call's loss
        functions (each evaluated once), and the call's write ops.
    """
    from spinup_tf.engine.steps import Minimize, Polyak
    memo, diagnostics, grads = {}, [], []
    with order.scope():
        for step in call:
            if isinstance(step, Minimize):
                if id(step.loss_fn) not in memo:
                    memo[id(step.loss_fn)] = step.loss_fn(batch)
                    diagnostics.append((step.loss_fn, memo[id(step.loss_fn)][1]))
                loss = step.pick(memo[id(step.loss_fn)][0])
                if gradients:
                    grads.append(_clipped(step.optimizer.compute_gradients(
                        loss, var_list=step.var_list), step.max_grad_norm))
                else:
                    grads.append([(tf.zeros(v.shape, v.dtype.base_dtype), v)
                                  for v in step.var_list])
            else:
                grads.append(None)
    ops = []
    for step, step_grads in zip(call, grads):
        if isinstance(step, Minimize):
            keys = [_key(v) for v in step.var_list] + [_key(step.optimizer)]
            with tf.control_dependencies(order.write_deps(keys)):
                op = step.optimizer.apply_gradients(step_grads)
            order.wrote(keys, op)
        elif isinstance(step, Polyak):
            op = order.polyak(step.polyak, step.main_scope, step.target_scope)
        else:
            raise TypeError('not a step: %r' % (step,))
        ops.append(op)
    return diagnostics, ops
