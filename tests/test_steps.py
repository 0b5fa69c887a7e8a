"""The update contract (spinup_tf.engine.steps): tracing a schedule and finding its period."""
from spinup_tf.engine.steps import trace, period, distinct_calls
from spinup_tf.loops.hooks import Hooks, counted_update
from spinup_tf.reproductions.hooks import make_hooks

Q, PI, TARG = object(), object(), object()


def td3_like(delay):
    def update(train, j):
        train(Q)
        if j % delay == 0:
            train(PI, TARG)
    return update


def test_trace_lists_the_calls_of_each_update():
    assert trace(td3_like(2), 3) == [[(Q,), (PI, TARG)], [(Q,)], [(Q,), (PI, TARG)]]


def test_period_is_the_policy_delay_and_none_when_not_periodic():
    assert [period(td3_like(d)) for d in (1, 2, 3, 5)] == [1, 2, 3, 5]
    assert period(lambda train, j: train(Q) if j in (0, 1, 7) else None) is None
    assert period(td3_like(13)) is None  # longer than the fast engine unrolls


def test_distinct_calls_in_first_use_order():
    calls = distinct_calls(td3_like(2))
    assert len(calls) == 2 and calls[0] == (Q,) and calls[1] == (PI, TARG)


def test_update_count_from_shifts_the_phase():
    shifted = counted_update(td3_like(3), make_hooks(update_count_from=1))
    assert trace(shifted, 3) == [[(Q,)], [(Q,)], [(Q,), (PI, TARG)]]
    update = td3_like(3)
    assert counted_update(update, Hooks()) is update  # Spinning Up's count: untouched
