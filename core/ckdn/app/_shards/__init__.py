"""Shard merge: runs of one check made in pieces, sealed as one run of it."""
