"""Program order for the variables of several ``sess.run`` lists fused into one call.

Spinning Up runs an update as separate ``sess.run`` calls (TD3: the Q list, then the policy
list), so each call reads the variables the previous one wrote. The fast engine puts a whole
window of such lists into one ``sess.run``, where TensorFlow runs any two ops with no
dependency between them in any order, on any thread. :class:`Hazards` restores the order of
the separate calls, op by op, after an algorithm has built its lists with its own TF1 calls
(``optimizer.minimize``, ``tf.assign``...):

* a **read** of a variable in a list waits for the last **write** to it in an earlier list
  (read after write);
* a **write** waits for the last write in an earlier list (write after write) and for every
  read since then (write after read), so no earlier read sees a value from the future.

Inside one list, the order is the algorithm's own, as in a single Spinning Up ``sess.run``
(data dependencies, and ``tf.control_dependencies`` where a list writes a variable it also
reads, such as the policy step before the polyak update). Nothing else is ordered, so ops on
disjoint variables overlap on the cores (the policy step of one update beside the Q loss of
the next).

Reads and writes are found in the graph: every op that takes a variable's resource handle is
an access, a read when it is one of :data:`READ_OPS`, a write otherwise (``ResourceApplyAdam``,
``AssignVariableOp``, ``AssignAddVariableOp``...). An optimizer's slots and beta powers are
variables like any other, so two steps of one optimizer never overlap.
"""
from spinup_tf.utils.tf1 import tf

READ_OPS = frozenset(['ReadVariableOp', 'ResourceGather', 'ResourceGatherNd'])
"""Ops that read a variable through its handle and change nothing."""
NO_ACCESS_OPS = frozenset(['VarIsInitializedOp', 'VariableShape', 'VarHandleOp',
                           'DestroyResourceOp'])
"""Ops that take a handle without touching the variable's value."""
_PASS_THROUGH = frozenset(['Enter', 'Identity', 'Switch', 'Merge', 'RefEnter'])
"""Ops that pass a handle on (a while loop's ``Enter`` of a variable captured from outside)."""


def variable_key(handle):
    """The name of the ``VarHandleOp`` behind a resource tensor (through a while loop's
    ``Enter`` and identities), one key per variable."""
    op = handle.op
    while op.type in _PASS_THROUGH and op.inputs:
        op = op.inputs[0].op
    return op.name


def accesses(op):
    """``[(key, is_write)]``: the variables ``op`` reads or writes."""
    if op.type in NO_ACCESS_OPS or op.type in _PASS_THROUGH:
        return []
    write = op.type not in READ_OPS
    return [(variable_key(t), write) for t in op.inputs if t.dtype == tf.resource]


def ops_of(fetches, new_ops):
    """The ops among ``new_ops`` (a set) that running ``fetches`` executes: the fetches'
    inputs and control inputs, followed back while they are in ``new_ops``."""
    stack = [f if isinstance(f, tf.Operation) else f.op for f in tf.nest.flatten(fetches)]
    seen = set()
    while stack:
        op = stack.pop()
        if op in seen or op not in new_ops:
            continue
        seen.add(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return seen


class Hazards:
    """Read/write bookkeeping of lists added one after another (see the module).

    Args:
        start: ops that every first access of a variable waits for (the loop counter of
            a ``tf.while_loop`` iteration, which the previous iteration's frontier gates).
    """

    def __init__(self, start=()):
        self.start = [s if isinstance(s, tf.Operation) else s.op for s in start]
        self.last_writes = {}   # key -> the write ops of the last list that wrote it
        self.reads = {}         # key -> read ops since those writes

    def _written(self, key):
        return self.last_writes.get(key) or self.start

    def add(self, fetches, new_ops):
        """Order the ops that ``fetches`` (one list) runs among ``new_ops`` after the lists
        added before; returns nothing (the ops get control inputs)."""
        found = {}
        for op in sorted(ops_of(fetches, new_ops), key=lambda o: o._id):
            deps = []
            for key, write in accesses(op):
                deps += self._written(key)
                if write:
                    deps += self.reads.get(key, [])
                found.setdefault(key, ([], []))[1 if write else 0].append(op)
            deps = [d for d in _unique(deps) if d is not op and d not in op.control_inputs]
            if deps:
                op._add_control_inputs(deps)
        for key, (reads, writes) in found.items():
            if writes:
                self.last_writes[key] = writes
                self.reads[key] = reads
            else:
                self.reads[key] = self.reads.get(key, []) + reads

    def frontier(self):
        """Every op a later sequence must wait for: the last writes and the reads since."""
        ops = [op for writes in self.last_writes.values() for op in writes]
        ops += [op for reads in self.reads.values() for op in reads]
        return _unique(ops) or list(self.start)


def _unique(ops):
    seen, out = set(), []
    for op in ops:
        if op is not None and op not in seen:
            seen.add(op)
            out.append(op)
    return out


class NewOps:
    """``with NewOps() as new: ...``: ``new.ops`` is then the set of ops the block created in
    the default graph."""

    def __enter__(self):
        self.graph = tf.get_default_graph()
        self.first = len(self.graph.get_operations())
        return self

    def __exit__(self, *exc):
        self.ops = set(self.graph.get_operations()[self.first:])  # in creation order
        return False
