import pytest

# The shared checks live outside test modules: have pytest explain their failed asserts too.
pytest.register_assert_rewrite("tests.interop.suite", "tests.interop.everything_suite", "tests.interop.peer")
