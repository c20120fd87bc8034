"""hypothesis-jsonschema 0.23.1 calls `many.more()`, which newer Hypothesis removed (its `many`
became a context manager you iterate). This shim gives `many` the old method back, for tests only."""

from __future__ import annotations


def install() -> None:
    from hypothesis.internal.conjecture import utils as cu

    if hasattr(cu.many, "more"):
        return

    def more(self) -> bool:
        if getattr(self, "_compat_iter", None) is None:
            self.__enter__()
            self._compat_iter = iter(self)
        try:
            next(self._compat_iter)
            return True
        except StopIteration:
            self.__exit__(None, None, None)
            return False

    cu.many.more = more
