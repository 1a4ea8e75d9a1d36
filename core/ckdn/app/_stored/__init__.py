"""Questions about stored runs: windows into evidence, diffs, test outcomes, live progress."""
