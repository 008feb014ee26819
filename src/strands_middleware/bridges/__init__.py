"""Hosts other than the reference agent, each behind an extra that installs its host."""
