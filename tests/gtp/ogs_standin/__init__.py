"""A local stand-in for the OGS server, to play games through the real gtp2ogs
(tests/gtp/ogs_standin/README.md)."""
