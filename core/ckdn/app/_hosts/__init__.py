"""Runs a host made itself (the pytest plugin, tox observe): their log, lock and seal."""
