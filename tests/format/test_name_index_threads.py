"""Graph.find_tensor builds its name index lazily (a loaded graph's is stale until the
first lookup), and Sessions look names up from many threads at once. A thread that
finds the index stale must never leave a half-built index where another thread reads
it: the old code cleared the shared dict and refilled it in place, so a thread that
saw it up to date could look a name up in an empty dict ("no tensor named 'x'").

The interleaving is forced here: thread B is held just after it read the tensor count
(and, if it rebuilds in place, just after it started refilling the dict)."""

import threading

from onegraph.format import Graph
from onegraph.format.ir import Tensor


class _HeldList(list):
    """A tensor list that holds thread "B" in len() and while iterating."""

    def __init__(self, items):
        super().__init__(items)
        self.in_len, self.leave_len = threading.Event(), threading.Event()
        self.in_iter, self.leave_iter = threading.Event(), threading.Event()

    def __len__(self):
        if threading.current_thread().name == "B" and not self.in_len.is_set():
            self.in_len.set()
            self.leave_len.wait(10)
        return super().__len__()

    def __iter__(self):
        for k, item in enumerate(super().__iter__()):
            if k == 1 and threading.current_thread().name == "B":
                self.in_iter.set()
                self.leave_iter.wait(10)
            yield item


def test_a_lookup_never_sees_a_half_built_index():
    g = Graph("main")
    for i in range(5):
        g.add_tensor(f"pad{i}", "float32", [1])
    x = g.add_input("x", "float32", [2])
    held = _HeldList(g.tensors)
    g.tensors = held
    held.append(Tensor("loaded_later", "float32", [1]))  # as the reader does: stale
    found = {}
    b = threading.Thread(target=lambda: found.update(b=g.find_tensor("x")), name="B")
    b.start()
    assert held.in_len.wait(10)
    assert g.find_tensor("x") == x  # this thread builds the index whole
    held.leave_len.set()
    # B either rebuilds (and is held mid-way) or is done: either way, look again
    while b.is_alive() and not held.in_iter.is_set():
        b.join(0.01)
    try:
        assert g.find_tensor("x") == x
        assert g.find_tensor("loaded_later") == len(held) - 1
    finally:
        held.leave_iter.set()
        b.join(10)
    assert not b.is_alive()
    assert found["b"] == x
