"""The harnesses of this repository's hosts, one module each.

Each module imports its framework, so nothing imports one until its host is asked for
(`strands_middleware.conformance.load_harness`). They are also the examples to copy when
writing a harness for another framework.
"""
