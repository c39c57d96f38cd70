"""Fixtures shared by several test modules, which live in folders that mirror the floors
(stats/, data/, analysis/, render/, cli/, app/, browser/), their helpers in support/.

The object-storage fixtures (moto's S3 server on 127.0.0.1, the counting proxy in front of
it, AWS variables pointing at it, one fresh bucket per test) live in tests/support/s3_server.py;
named here, every module can ask for them by name.
"""

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The helpers every test folder imports by name (tests/support/), the way pytest puts a
# test module's own folder on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

from s3_server import aws_env, moto_url, proxy, store  # noqa: E402, F401

_exit_status: int | None = None  # set once the session has finished


@pytest.fixture(autouse=True)
def page_exceptions_raised() -> Iterator[None]:
    """AppTest reads the project's .streamlit/config.toml, whose showErrorDetails "none"
    turns a page's exception into a short message (dashboard/app/errors.py); with full
    details asked for, a page that raises is listed in `at.exception`, which the page
    tests check. tests/app/test_error_details.py asks for "none" itself."""
    if "streamlit.testing.v1" not in sys.modules:  # no AppTest in this module
        yield
        return
    from streamlit.testing.v1.util import patch_config_options

    with patch_config_options({"client.showErrorDetails": "full"}):
        yield


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    global _exit_status
    _exit_status = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """End the test process without the interpreter's finalization, once every result
    is reported: DuckDB can abort a process whose connection is finalized during it
    ('terminate called ... FATAL: exception not rethrown', SIGABRT; duckdb/duckdb#13904,
    open), which ended one passing run of this project's tests with SIGABRT."""
    if _exit_status is None:  # stopped before a session: pytest says why and exits
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_exit_status)
