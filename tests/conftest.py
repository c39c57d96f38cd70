"""Fixtures shared by several test modules.

The object-storage fixtures (moto's S3 server on 127.0.0.1, the counting proxy in front of
it, AWS variables pointing at it, one fresh bucket per test) live in tests/s3_server.py;
named here, every module can ask for them by name.
"""

from s3_server import aws_env, moto_url, proxy, store  # noqa: F401
